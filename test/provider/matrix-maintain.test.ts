// The fault matrix's maintain rows (matrix-spec.ts): every call maintain makes, under every fault.
import { defineFaultMatrix } from "./matrix-spec.js";

defineFaultMatrix(["maintain"]);
