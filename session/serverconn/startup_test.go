package serverconn

import "testing"

func TestMissingAtStart(t *testing.T) {
	tests := []struct {
		name, stderr, want string
	}{
		{"node require of a script", "node:internal/modules/cjs/loader:1210\n  throw err;\n  ^\n\nError: Cannot find module '/w/interop/node_modules/x/dist/index.js'\n    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)\n{\n  code: 'MODULE_NOT_FOUND'\n}\n\nNode.js v20.20.2\n",
			"Cannot find module '/w/interop/node_modules/x/dist/index.js'"},
		{"node ESM import", "node:internal/process/esm_loader:40\nError [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /w/index.js\n",
			"Cannot find package 'zod'"},
		{"python import", "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nModuleNotFoundError: No module named 'mcp'\n",
			"ModuleNotFoundError: No module named 'mcp'"},
		{"python script", "/usr/bin/python3: can't open file '/srv/server.py': [Errno 2] No such file or directory\n",
			"/usr/bin/python3: can't open file '/srv/server.py': [Errno 2] No such file or directory"},
		{"sh", "sh: 1: my-server: not found\n", "sh: 1: my-server: not found"},
		{"bash", "bash: line 1: my-server: command not found\n", "bash: line 1: my-server: command not found"},
		{"env", "/usr/bin/env: 'deno': No such file or directory\n", "/usr/bin/env: 'deno': No such file or directory"},
		{"a crash is not a missing piece", "panic: runtime error: index out of range\n\ngoroutine 1 [running]:\n", ""},
		{"nothing written", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := missingAtStart(tc.stderr); got != tc.want {
				t.Errorf("missingAtStart = %q, want %q", got, tc.want)
			}
		})
	}
}
