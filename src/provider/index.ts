// The vercel-sandbox WorkerProvider (work in progress).
export {};
