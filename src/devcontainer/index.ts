// The pure devcontainer recipe engine (seed 002): no I/O, no Vercel, no OpenClaw (work in progress).
export {};
