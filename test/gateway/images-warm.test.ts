// `openclaw vercel-sandbox images warm` on the pinned openclaw@2026.9.2 (images-warm.ts); its build is the run's
// base runtime image of 2026.9.2 (base-images.ts).
import { defineImagesWarmSpec } from "./images-warm.js";
import { PINNED_OPENCLAW_VERSION } from "./openclaw.js";

defineImagesWarmSpec(PINNED_OPENCLAW_VERSION);
