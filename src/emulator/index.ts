// The loopback Vercel Sandbox API: the embedded default backend (work in progress).
export {};
