import { defineConfig } from "tsup";

// Dependencies and the openclaw peer stay external: the gateway must supply its own `openclaw`
// (core matches WorkerProviderError with instanceof), and npm installs the rest.
export default defineConfig({
  entry: {
    index: "src/index.ts",
    cli: "src/cli.ts",
    "emulator/index": "src/emulator/index.ts",
  },
  format: ["esm"],
  target: "node22",
  platform: "node",
  dts: { entry: { index: "src/index.ts", "emulator/index": "src/emulator/index.ts" } },
  sourcemap: true,
  clean: true,
  splitting: true,
  external: [/^openclaw(\/.*)?$/],
});
