#!/usr/bin/env node
// Command-line entry: `openclaw-vercel-sandbox emulator|demo` (work in progress).
process.stderr.write("openclaw-vercel-sandbox: not implemented yet\n");
process.exit(2);
