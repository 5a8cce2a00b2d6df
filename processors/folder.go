package processors

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// defaultIgnoredFolders are listed but not descended into, as gemini-cli's
// folder structure does.
var defaultIgnoredFolders = map[string]bool{"node_modules": true, ".git": true, "dist": true, "__pycache__": true}

type folderNode struct {
	name        string
	path        string
	files       []string
	subFolders  []*folderNode
	ignored     bool
	moreFiles   bool
	moreFolders bool
}

// IgnoreFunc reports whether an absolute path is excluded by ignore files.
type IgnoreFunc func(abs string, isDir bool) bool

// FolderStructure renders dir as gemini-cli's getFolderStructure does: a
// breadth-first scan bounded at maxItems files and folders, files before
// folders, names sorted, ignored folders (node_modules, .git, dist,
// __pycache__, and any folder ignore reports) shown with "...", ignored files
// left out, and truncation marked with "...". ignore may be nil.
func FolderStructure(ctx context.Context, dir string, maxItems int, ignore IgnoreFunc) string {
	root, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Sprintf("Error processing directory %q: %v", dir, err)
	}
	if ignore == nil {
		ignore = func(string, bool) bool { return false }
	}
	tree, err := scanFolder(ctx, root, maxItems, ignore)
	if err != nil {
		return fmt.Sprintf("Error: Could not read directory %q. Check path and permissions.", root)
	}
	var lines []string
	formatFolder(tree, "", true, true, &lines)
	summary := fmt.Sprintf("Showing up to %d items (files + folders).", maxItems)
	if truncated(tree) {
		summary += fmt.Sprintf(" Folders or files indicated with ... contain more items not shown, were ignored, or the display limit (%d items) was reached.", maxItems)
	}
	return summary + "\n\n" + root + string(filepath.Separator) + "\n" + strings.Join(lines, "\n")
}

func scanFolder(ctx context.Context, root string, maxItems int, ignore IgnoreFunc) (*folderNode, error) {
	rootNode := &folderNode{name: filepath.Base(root), path: root}
	queue := []*folderNode{rootNode}
	count := 0
	seen := map[string]bool{}
	for len(queue) > 0 {
		if ctx.Err() != nil {
			break
		}
		node := queue[0]
		queue = queue[1:]
		if seen[node.path] || count >= maxItems {
			continue
		}
		seen[node.path] = true
		entries, err := os.ReadDir(node.path)
		if err != nil {
			if node == rootNode {
				return nil, err
			}
			continue
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			if count >= maxItems {
				node.moreFiles = true
				break
			}
			if ignore(filepath.Join(node.path, e.Name()), false) {
				continue
			}
			node.files = append(node.files, e.Name())
			count++
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			if count >= maxItems {
				node.moreFolders = true
				break
			}
			sub := &folderNode{name: e.Name(), path: filepath.Join(node.path, e.Name())}
			count++
			node.subFolders = append(node.subFolders, sub)
			if defaultIgnoredFolders[e.Name()] || ignore(sub.path, true) {
				sub.ignored = true
				continue
			}
			queue = append(queue, sub)
		}
	}
	return rootNode, nil
}

func formatFolder(n *folderNode, indent string, last, isRoot bool, out *[]string) {
	connector := "├───"
	if last {
		connector = "└───"
	}
	if !isRoot || n.ignored {
		line := indent + connector + n.name + string(filepath.Separator)
		if n.ignored {
			line += "..."
		}
		*out = append(*out, line)
	}
	childIndent := ""
	if !isRoot {
		if last {
			childIndent = indent + "    "
		} else {
			childIndent = indent + "│   "
		}
	}
	for i, f := range n.files {
		c := "├───"
		if i == len(n.files)-1 && len(n.subFolders) == 0 && !n.moreFolders {
			c = "└───"
		}
		*out = append(*out, childIndent+c+f)
	}
	if n.moreFiles {
		c := "├───"
		if len(n.subFolders) == 0 && !n.moreFolders {
			c = "└───"
		}
		*out = append(*out, childIndent+c+"...")
	}
	for i, sub := range n.subFolders {
		formatFolder(sub, childIndent, i == len(n.subFolders)-1 && !n.moreFolders, false, out)
	}
	if n.moreFolders {
		*out = append(*out, childIndent+"└───...")
	}
}

func truncated(n *folderNode) bool {
	if n.moreFiles || n.moreFolders || n.ignored {
		return true
	}
	for _, s := range n.subFolders {
		if truncated(s) {
			return true
		}
	}
	return false
}
