import { defineConfig } from "tsup";

// Public entry points; each maps to a package.json `exports` subpath. A room whose door (index.ts) offers the
// other rooms more than the package publishes has its public names in public.ts.
const entry = {
  index: "src/index.ts",
  "emulator/index": "src/emulator/index.ts",
  "provider/index": "src/provider/public.ts",
  "devcontainer/index": "src/devcontainer/index.ts",
  "conformance/index": "src/conformance/index.ts",
  "host/index": "src/host/public.ts",
  "reference-host/index": "src/reference-host/index.ts",
};

// Dependencies and the openclaw peer stay external: the gateway must supply its own `openclaw`
// (core matches WorkerProviderError with instanceof), and npm installs the rest. The conformance suite
// runs inside the user's own vitest.
export default defineConfig({
  entry: { ...entry, cli: "src/cli.ts", config: "src/config.ts" },
  format: ["esm"],
  target: "node22",
  platform: "node",
  dts: { entry },
  sourcemap: true,
  clean: true,
  splitting: true,
  external: [/^openclaw(\/.*)?$/, "vitest"],
});
