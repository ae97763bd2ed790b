// `openclaw vercel-sandbox images warm` on the newest 2026.9.x (images-warm.ts); its build is the run's base
// runtime image of that release (base-images.ts).
import { defineImagesWarmSpec } from "./images-warm.js";
import { NEWEST_OPENCLAW_VERSION } from "./versions.js";

defineImagesWarmSpec(NEWEST_OPENCLAW_VERSION);
