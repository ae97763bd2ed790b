// The bench reuses a few of the specs' TypeScript fixtures (OpenClaw's own project preparation loaded from the
// installed package, real Git repositories, the real-gateway harness) instead of copying them. Node 24 strips
// their types itself; this hook only maps the specs' `./x.js` imports onto the `./x.ts` files beside them, as
// their bundler does. Nothing in dist/ goes through it: the bench measures the built package.
import { existsSync } from "node:fs";
import { registerHooks } from "node:module";
import { fileURLToPath } from "node:url";

let registered = false;

function register() {
  if (registered) return;
  registered = true;
  registerHooks({
    resolve(specifier, context, next) {
      if (/^\.\.?\//.test(specifier) && specifier.endsWith(".js") && context.parentURL?.endsWith(".ts")) {
        const ts = new URL(specifier.replace(/\.js$/, ".ts"), context.parentURL);
        if (existsSync(fileURLToPath(ts))) return next(ts.href, context);
      }
      return next(specifier, context);
    },
  });
}

/** test/preparation/fixtures.ts: `loadCorePreparation`, `createRepo`. */
export async function preparationFixtures() {
  register();
  return import("../../test/preparation/fixtures.ts");
}

/** test/gateway/harness.ts: `GatewayHarness` (isolated state, the packed plugin installed as a user would). */
export async function gatewayHarness() {
  register();
  return import("../../test/gateway/harness.ts");
}

/** test/provider/fixtures/artifact.ts and test/support/tls.ts: the fixture node's artifact, a self-signed cert. */
export async function enrollmentFixtures() {
  register();
  const [{ packFixture }, { selfSigned }] = await Promise.all([
    import("../../test/provider/fixtures/artifact.ts"),
    import("../../test/support/tls.ts"),
  ]);
  return { packFixture, selfSigned };
}
