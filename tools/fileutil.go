package tools

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentry-dev/agentry/internal/safefs"
	"github.com/agentry-dev/agentry/internal/utf8cut"
)

// Limits of read_file and read_many_files, gemini-cli's values.
const (
	maxLinesTextFile  = 2000
	maxLineLength     = 2000
	maxFileSizeBytes  = 20 << 20
	maxSVGSizeBytes   = 1 << 20
	binarySniffLength = 8 << 10
	truncatedLineMark = "... [truncated]"
)

// fileType is what detectFileType makes of a file.
type fileType string

const (
	typeText   fileType = "text"
	typeImage  fileType = "image"
	typePDF    fileType = "pdf"
	typeAudio  fileType = "audio"
	typeVideo  fileType = "video"
	typeBinary fileType = "binary"
	typeSVG    fileType = "svg"
)

// mediaTypes maps extensions to MIME types for the files gemini-cli hands
// to the model as inline data. A fixed table rather than mime.TypeByExtension,
// whose answers depend on the host's mime.types files.
var mediaTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".webp": "image/webp", ".bmp": "image/bmp",
	".ico": "image/vnd.microsoft.icon", ".tif": "image/tiff", ".tiff": "image/tiff",
	".heic": "image/heic", ".heif": "image/heif", ".avif": "image/avif",
	".pdf": "application/pdf",
	".mp3": "audio/mpeg", ".wav": "audio/wav", ".aiff": "audio/aiff", ".aif": "audio/aiff",
	".aac": "audio/aac", ".ogg": "audio/ogg", ".flac": "audio/flac", ".m4a": "audio/mp4",
	".opus": "audio/opus",
	".mp4":  "video/mp4", ".mov": "video/quicktime", ".avi": "video/x-msvideo",
	".mkv": "video/x-matroska", ".webm": "video/webm", ".mpeg": "video/mpeg",
	".mpg": "video/mpeg", ".wmv": "video/x-ms-wmv", ".flv": "video/x-flv",
}

// binaryExtensions are treated as binary without looking at the content
// (gemini-cli's BINARY_EXTENSIONS).
var binaryExtensions = map[string]bool{
	".bin": true, ".exe": true, ".dll": true, ".so": true, ".dylib": true,
	".class": true, ".jar": true, ".war": true, ".zip": true, ".tar": true,
	".gz": true, ".bz2": true, ".rar": true, ".7z": true, ".pak": true,
	".rpa": true, ".doc": true, ".docx": true, ".xls": true, ".xlsx": true,
	".ppt": true, ".pptx": true, ".odt": true, ".ods": true, ".odp": true,
	".pyc": true, ".pyo": true, ".dat": true, ".obj": true, ".o": true,
	".a": true, ".lib": true, ".wasm": true,
}

// detectFileType classifies a file by extension and, where that is not
// conclusive, by content, as gemini-cli's detectFileType does. binary
// sniffs the start of the file; it is called only when needed.
func detectFileType(p string, binary func() bool) fileType {
	ext := strings.ToLower(filepath.Ext(p))
	switch ext {
	case ".ts", ".mts", ".cts":
		// Their MIME type is MPEG transport stream; they are TypeScript.
		return typeText
	case ".svg":
		return typeSVG
	}
	if mt, ok := mediaTypes[ext]; ok {
		switch {
		case strings.HasPrefix(mt, "image/"):
			return typeImage
		case mt == "application/pdf":
			return typePDF
		case strings.HasPrefix(mt, "audio/"), strings.HasPrefix(mt, "video/"):
			// A text file can wear a media extension; only call it
			// media if its content is binary.
			if !binary() {
				return typeText
			}
			if strings.HasPrefix(mt, "audio/") {
				return typeAudio
			}
			return typeVideo
		}
	}
	if binaryExtensions[ext] {
		return typeBinary
	}
	if binary() {
		return typeBinary
	}
	return typeText
}

// sniffBinary reads the start of an open file, without moving its offset,
// and tells whether it looks binary.
func sniffBinary(f *os.File) bool {
	buf := make([]byte, binarySniffLength)
	n, _ := f.ReadAt(buf, 0)
	return isBinary(buf[:n])
}

// isBinary is the isbinaryfile heuristic gemini-cli relies on, reduced to
// what matters: text with a Unicode BOM is text; a NUL byte means binary;
// valid UTF-8 is text; otherwise binary if more than a tenth of the bytes
// are control characters or invalid UTF-8.
func isBinary(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if bomOf(b) != nil {
		return false
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	// The sample may end inside a multi-byte character.
	trimmed := b[:len(b)-utf8cut.IncompleteTail(b)]
	if utf8.Valid(trimmed) {
		return false
	}
	suspicious := 0
	for i := 0; i < len(trimmed); {
		r, size := utf8.DecodeRune(trimmed[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			suspicious++
		case r < 32 && r != '\t' && r != '\n' && r != '\r' && r != '\f' && r != '\b' && r != 0x1b:
			suspicious++
		}
		i += size
	}
	return suspicious*10 > len(trimmed)
}

// bom describes a Unicode byte order mark.
type bom struct {
	length int
	decode func([]byte) string
}

func bomOf(b []byte) *bom {
	switch {
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE, 0, 0}):
		return &bom{4, func(b []byte) string { return decodeUTF32(b, true) }}
	case bytes.HasPrefix(b, []byte{0, 0, 0xFE, 0xFF}):
		return &bom{4, func(b []byte) string { return decodeUTF32(b, false) }}
	case bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}):
		return &bom{3, func(b []byte) string { return string(b) }}
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}):
		return &bom{2, func(b []byte) string { return decodeUTF16(b, true) }}
	case bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		return &bom{2, func(b []byte) string { return decodeUTF16(b, false) }}
	}
	return nil
}

func decodeUTF16(b []byte, little bool) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		if little {
			u[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
		} else {
			u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		}
	}
	return string(utf16.Decode(u))
}

func decodeUTF32(b []byte, little bool) string {
	var sb strings.Builder
	for i := 0; i+4 <= len(b); i += 4 {
		var cp uint32
		if little {
			cp = uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16 | uint32(b[i+3])<<24
		} else {
			cp = uint32(b[i+3]) | uint32(b[i+2])<<8 | uint32(b[i+1])<<16 | uint32(b[i])<<24
		}
		r := rune(cp)
		if cp > utf8.MaxRune || !utf8.ValidRune(r) {
			r = utf8.RuneError
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// decodeText turns file bytes into text, honouring and stripping a UTF-8,
// UTF-16 or UTF-32 BOM; without one the bytes are taken as UTF-8.
func decodeText(b []byte) string {
	if m := bomOf(b); m != nil {
		return m.decode(b[m.length:])
	}
	return string(b)
}

// splitLines splits on \n and \r\n, as gemini-cli's content.split(/\r?\n/).
func splitLines(s string) []string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// usesCRLF reports whether text's first line ending is \r\n.
func usesCRLF(s string) bool {
	i := strings.IndexByte(s, '\n')
	return i > 0 && s[i-1] == '\r'
}

// toCRLF converts every line ending of s to \r\n.
func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// truncateRunes cuts s to max runes, marking the cut.
func truncateRunes(s string, max int) (string, bool) {
	if utf8.RuneCountInString(s) <= max {
		return s, false
	}
	i, n := 0, 0
	for i < len(s) && n < max {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	return s[:i] + truncatedLineMark, true
}

// fileContent is what readFileContent made of one file.
type fileContent struct {
	text      string // what the model reads
	display   string
	truncated bool
	total     int // lines in the file (text files)
	first     int // first line shown, 1-based (text files)
	last      int // last line shown (text files)
	kind      fileType
	mimeType  string // media files
	size      int64  // media files
}

// openedFile is a file opened for reading by the file tools, classified.
type openedFile struct {
	f    *os.File
	fi   fs.FileInfo
	kind fileType
}

// openForRead opens abs (a path returned by Resolve) confined to its
// workspace root, checks that it is a regular file and classifies it.
// The caller closes it.
func openForRead(ws *Workspace, abs string) (*openedFile, error) {
	f, fi, err := ws.openFile(abs)
	if err != nil {
		var te *Error
		switch {
		case errors.As(err, &te):
			return nil, err
		case errors.Is(err, fs.ErrNotExist):
			e := Errorf(ErrFileNotFound,
				"File not found: %s. Could not read file because no file was found at the specified path; check the path, or use glob or list_directory to find the file.", abs)
			e.Display = "File not found."
			return nil, e
		}
		return nil, &Error{Type: ErrReadContentFailure, Msg: fmt.Sprintf("Error reading file %s: %v", abs, err), Err: err}
	}
	if fi.IsDir() {
		f.Close()
		e := Errorf(ErrTargetIsDirectory,
			"Path is a directory, not a file: %s. Use list_directory to see its contents.", abs)
		e.Display = "Path is a directory."
		return nil, e
	}
	if !fi.Mode().IsRegular() {
		// A FIFO or device could block the read forever.
		f.Close()
		return nil, Errorf(ErrReadContentFailure, "Cannot read %s: it is not a regular file (%s).", abs, fi.Mode().Type())
	}
	return &openedFile{f: f, fi: fi, kind: detectFileType(abs, func() bool { return sniffBinary(f) })}, nil
}

func (o *openedFile) Close() error { return o.f.Close() }

// readFileContent reads one file for the model, as gemini-cli's
// processSingleFileContent: text files are sliced to a line range (the first
// 2000 lines by default) with over-long lines cut; binary and media files
// are reported rather than shown. rel is the path to show.
func readFileContent(ws *Workspace, abs, rel string, start, end int) (fileContent, error) {
	o, err := openForRead(ws, abs)
	if err != nil {
		return fileContent{}, err
	}
	defer o.Close()
	return o.content(abs, rel, start, end)
}

// content is readFileContent for an opened file.
func (o *openedFile) content(abs, rel string, start, end int) (fileContent, error) {
	fi, kind := o.fi, o.kind
	if fi.Size() > maxFileSizeBytes {
		return fileContent{}, Errorf(ErrFileTooLarge,
			"File size exceeds the %dMB limit: %s (%.2fMB). Use grep_search to find the relevant part, or run_shell_command with head, tail or sed to read part of it.",
			maxFileSizeBytes>>20, abs, float64(fi.Size())/(1<<20))
	}
	switch kind {
	case typeBinary:
		return fileContent{
			kind:    kind,
			text:    "Cannot display content of binary file: " + rel,
			display: "Skipped binary file: " + rel,
		}, nil
	case typeImage, typePDF, typeAudio, typeVideo:
		mt := mediaTypes[strings.ToLower(filepath.Ext(abs))]
		return fileContent{
			kind:     kind,
			mimeType: mt,
			size:     fi.Size(),
			text:     fmt.Sprintf("Cannot display content of %s file as text: %s (%s, %d bytes).", kind, rel, mt, fi.Size()),
			display:  fmt.Sprintf("Skipped %s file: %s", kind, rel),
		}, nil
	case typeSVG:
		if fi.Size() > maxSVGSizeBytes {
			return fileContent{
				kind:    kind,
				text:    "Cannot display content of SVG file larger than 1MB: " + rel,
				display: "Skipped large SVG file (>1MB): " + rel,
			}, nil
		}
		b, err := readAllBounded(o.f, fi.Size(), maxSVGSizeBytes)
		if err != nil {
			return fileContent{}, readError(abs, err)
		}
		return fileContent{kind: kind, text: decodeText(b), display: "Read SVG as text: " + rel}, nil
	}

	b, err := readAllBounded(o.f, fi.Size(), maxFileSizeBytes)
	if err != nil {
		return fileContent{}, readError(abs, err)
	}
	text := decodeText(b)
	lines := splitLines(text)
	total := len(lines)
	from, to := 0, min(maxLinesTextFile, total)
	if start > 0 || end > 0 {
		if start > 0 {
			from = start - 1
		}
		if end > 0 {
			to = min(end, total)
		} else {
			to = min(from+maxLinesTextFile, total)
		}
	}
	from = min(from, total)
	to = max(to, from)
	shown := lines[from:to]
	cut := false
	out := make([]string, len(shown))
	for i, l := range shown {
		var c bool
		out[i], c = truncateRunes(l, maxLineLength)
		cut = cut || c
	}
	// The slice is gemini-cli's, so the model reads the same text; the
	// counts are of real lines: a final newline ends the last line rather
	// than starting another (gemini-cli counts "a\nb\nc\n" as 4 lines).
	lineCount, last := total, to
	if text == "" || strings.HasSuffix(text, "\n") {
		lineCount--
	}
	if last > lineCount && from < lineCount {
		last = lineCount
	}
	fc := fileContent{
		kind:      kind,
		text:      strings.Join(out, "\n"),
		truncated: from > 0 || to < total || cut,
		total:     lineCount,
		first:     from + 1,
		last:      last,
	}
	switch {
	case from > 0 || to < total:
		fc.display = fmt.Sprintf("Read lines %d-%d of %d from %s", fc.first, fc.last, fc.total, rel)
		if cut {
			fc.display += " (some lines were shortened)"
		}
	case cut:
		fc.display = fmt.Sprintf("Read all %d lines from %s (some lines were shortened)", fc.total, rel)
	}
	return fc, nil
}

func readError(abs string, err error) error {
	return &Error{Type: ErrReadContentFailure, Msg: fmt.Sprintf("Error reading file %s: %v", abs, err), Err: err}
}

// writeError classifies a failed write as gemini-cli does.
func writeError(abs string, err error) *Error {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return &Error{Type: ErrNoSpaceLeft, Msg: fmt.Sprintf("No space left on device: %s (ENOSPC)", abs), Err: err}
	case errors.Is(err, fs.ErrPermission):
		return &Error{Type: ErrPermissionDenied, Msg: fmt.Sprintf("Permission denied writing to file: %s (EACCES)", abs), Err: err}
	case errors.Is(err, syscall.EISDIR):
		return &Error{Type: ErrTargetIsDirectory, Msg: fmt.Sprintf("Target is a directory, not a file: %s (EISDIR)", abs), Err: err}
	}
	return &Error{Type: ErrFileWriteFailure, Msg: fmt.Sprintf("Error writing to file '%s': %v", abs, err), Err: err}
}

// readExisting reads the file that write_file or replace (tool) is about
// to change, confined to its workspace root. A missing file is reported by
// exists; a directory, FIFO or device is refused without being read or
// blocking on; a file over the read_file size limit is refused, since the
// tools hold it, and diff it, in memory.
func readExisting(ws *Workspace, tool, abs string) (content []byte, exists bool, err error) {
	// Stat first, so that a device found at the path is not even opened;
	// the confined open below catches anything swapped in after.
	if fi, err := os.Stat(abs); err == nil {
		if err := checkWritable(abs, fi); err != nil {
			return nil, false, err
		}
	}
	f, fi, err := ws.openFile(abs)
	if err != nil {
		var te *Error
		switch {
		case errors.As(err, &te):
			return nil, false, err
		case errors.Is(err, fs.ErrNotExist):
			return nil, false, nil
		}
		return nil, false, &Error{Type: ErrReadContentFailure,
			Msg: fmt.Sprintf("Failed to read content of existing file: %s: %v", abs, err), Err: err}
	}
	defer f.Close()
	if err := checkWritable(abs, fi); err != nil {
		return nil, false, err
	}
	if fi.Size() > maxFileSizeBytes {
		return nil, false, tooLargeToEdit(tool, abs, fi.Size())
	}
	b, err := readAllBounded(f, fi.Size(), maxFileSizeBytes)
	if errors.Is(err, safefs.ErrTooLarge) {
		return nil, false, tooLargeToEdit(tool, abs, maxFileSizeBytes+1)
	}
	if err != nil {
		return nil, false, &Error{Type: ErrReadContentFailure,
			Msg: fmt.Sprintf("Failed to read content of existing file: %s: %v", abs, err), Err: err}
	}
	return b, true, nil
}

// tooLargeToEdit is the error for a file write_file or replace will not
// read.
func tooLargeToEdit(tool, abs string, size int64) error {
	return Errorf(ErrFileTooLarge,
		"File %s is too large for %s: %.2f MB, over the %d MB limit on files it reads to make and show the change. Use run_shell_command to change a file this large (for example with sed, or by writing the new content with a command).",
		abs, tool, float64(size)/(1<<20), maxFileSizeBytes>>20)
}

// checkWritable rejects an existing path that is not a regular file: a
// directory, or a FIFO or device that would block or misbehave.
func checkWritable(abs string, fi fs.FileInfo) error {
	switch {
	case fi.IsDir():
		return Errorf(ErrTargetIsDirectory, "Path is a directory, not a file: %s", abs)
	case !fi.Mode().IsRegular():
		return Errorf(ErrFileWriteFailure, "Cannot write %s: it is not a regular file (%s).", abs, fi.Mode().Type())
	}
	return nil
}
