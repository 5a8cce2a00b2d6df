// gemini-cli 0.61.0's editor-context code, copied verbatim from its bundle
// (IdeContextStore.set and GeminiClient.getIdeContextParts, with the
// processTurn lines that call it), run over the steps of each case read
// as JSON from stdin. Prints, as JSON, each step's text ("" for none).
const IDE_MAX_OPEN_FILES = 10;
const IDE_MAX_SELECTED_TEXT_LENGTH = 16384;

class IdeContextStore {
  ideContextState;
  set(newIdeContext) {
    const { workspaceState } = newIdeContext;
    if (!workspaceState) {
      this.ideContextState = newIdeContext;
      return;
    }
    const { openFiles } = workspaceState;
    if (openFiles && openFiles.length > 0) {
      openFiles.sort((a2, b) => b.timestamp - a2.timestamp);
      const mostRecentFile = openFiles[0];
      if (!mostRecentFile.isActive) {
        openFiles.forEach((file2) => {
          file2.isActive = false;
          file2.cursor = void 0;
          file2.selectedText = void 0;
        });
      } else {
        openFiles.forEach((file2, index) => {
          if (index !== 0) {
            file2.isActive = false;
            file2.cursor = void 0;
            file2.selectedText = void 0;
          }
        });
        if (mostRecentFile.selectedText && mostRecentFile.selectedText.length > IDE_MAX_SELECTED_TEXT_LENGTH) {
          mostRecentFile.selectedText = mostRecentFile.selectedText.substring(0, IDE_MAX_SELECTED_TEXT_LENGTH) + "... [TRUNCATED]";
        }
      }
      if (openFiles.length > IDE_MAX_OPEN_FILES) {
        workspaceState.openFiles = openFiles.slice(0, IDE_MAX_OPEN_FILES);
      }
    }
    this.ideContextState = newIdeContext;
  }
  clear() {
    this.ideContextState = void 0;
  }
  get() {
    return this.ideContextState;
  }
}

const ideContextStore = new IdeContextStore();

class Client {
  lastSentIdeContext;
  forceFullIdeContext = true;
  getIdeContextParts(forceFullContext) {
    const currentIdeContext = ideContextStore.get();
    if (!currentIdeContext) {
      return { contextParts: [], newIdeContext: void 0 };
    }
    if (forceFullContext || !this.lastSentIdeContext) {
      const openFiles = currentIdeContext.workspaceState?.openFiles || [];
      const activeFile = openFiles.find((f) => f.isActive);
      const otherOpenFiles = openFiles.filter((f) => !f.isActive).map((f) => f.path);
      const contextData = {};
      if (activeFile) {
        contextData["activeFile"] = {
          path: activeFile.path,
          cursor: activeFile.cursor ? {
            line: activeFile.cursor.line,
            character: activeFile.cursor.character
          } : void 0,
          selectedText: activeFile.selectedText || void 0
        };
      }
      if (otherOpenFiles.length > 0) {
        contextData["otherOpenFiles"] = otherOpenFiles;
      }
      if (Object.keys(contextData).length === 0) {
        return { contextParts: [], newIdeContext: currentIdeContext };
      }
      const jsonString = JSON.stringify(contextData, null, 2);
      const contextParts = [
        "Here is the user's editor context as a JSON object. This is for your information only.",
        "```json",
        jsonString,
        "```"
      ];
      return {
        contextParts,
        newIdeContext: currentIdeContext
      };
    } else {
      const delta = {};
      const changes = {};
      const lastFiles = new Map((this.lastSentIdeContext.workspaceState?.openFiles || []).map((f) => [f.path, f]));
      const currentFiles = new Map((currentIdeContext.workspaceState?.openFiles || []).map((f) => [
        f.path,
        f
      ]));
      const openedFiles = [];
      for (const [path117] of currentFiles.entries()) {
        if (!lastFiles.has(path117)) {
          openedFiles.push(path117);
        }
      }
      if (openedFiles.length > 0) {
        changes["filesOpened"] = openedFiles;
      }
      const closedFiles = [];
      for (const [path117] of lastFiles.entries()) {
        if (!currentFiles.has(path117)) {
          closedFiles.push(path117);
        }
      }
      if (closedFiles.length > 0) {
        changes["filesClosed"] = closedFiles;
      }
      const lastActiveFile = (this.lastSentIdeContext.workspaceState?.openFiles || []).find((f) => f.isActive);
      const currentActiveFile = (currentIdeContext.workspaceState?.openFiles || []).find((f) => f.isActive);
      if (currentActiveFile) {
        if (!lastActiveFile || lastActiveFile.path !== currentActiveFile.path) {
          changes["activeFileChanged"] = {
            path: currentActiveFile.path,
            cursor: currentActiveFile.cursor ? {
              line: currentActiveFile.cursor.line,
              character: currentActiveFile.cursor.character
            } : void 0,
            selectedText: currentActiveFile.selectedText || void 0
          };
        } else {
          const lastCursor = lastActiveFile.cursor;
          const currentCursor = currentActiveFile.cursor;
          if (currentCursor && (!lastCursor || lastCursor.line !== currentCursor.line || lastCursor.character !== currentCursor.character)) {
            changes["cursorMoved"] = {
              path: currentActiveFile.path,
              cursor: {
                line: currentCursor.line,
                character: currentCursor.character
              }
            };
          }
          const lastSelectedText = lastActiveFile.selectedText || "";
          const currentSelectedText = currentActiveFile.selectedText || "";
          if (lastSelectedText !== currentSelectedText) {
            changes["selectionChanged"] = {
              path: currentActiveFile.path,
              selectedText: currentSelectedText
            };
          }
        }
      } else if (lastActiveFile) {
        changes["activeFileChanged"] = {
          path: null,
          previousPath: lastActiveFile.path
        };
      }
      if (Object.keys(changes).length === 0) {
        return { contextParts: [], newIdeContext: currentIdeContext };
      }
      delta["changes"] = changes;
      const jsonString = JSON.stringify(delta, null, 2);
      const contextParts = [
        "Here is a summary of changes in the user's editor context, in JSON format. This is for your information only.",
        "```json",
        jsonString,
        "```"
      ];
      return {
        contextParts,
        newIdeContext: currentIdeContext
      };
    }
  }
  // processTurn's lines around the call; history is never empty here (it
  // holds the session context), forced marks a setHistory/startChat/
  // compression before the step.
  step(forced) {
    if (forced) this.forceFullIdeContext = true;
    const { contextParts, newIdeContext } = this.getIdeContextParts(this.forceFullIdeContext);
    this.lastSentIdeContext = newIdeContext;
    this.forceFullIdeContext = false;
    return contextParts.join("\n");
  }
}

let input = "";
process.stdin.setEncoding("utf8");
for await (const chunk of process.stdin) input += chunk;
const out = {};
for (const c of JSON.parse(input)) {
  const client = new Client();
  ideContextStore.clear();
  out[c.name] = c.steps.map((s) => {
    if (s.context === null) ideContextStore.clear();
    else ideContextStore.set(s.context);
    return client.step(!!s.forced);
  });
}
process.stdout.write(JSON.stringify(out, null, 2) + "\n");
