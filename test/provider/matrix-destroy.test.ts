// The fault matrix's destroy rows (matrix-spec.ts): every call destroy makes, under every fault.
import { defineFaultMatrix } from "./matrix-spec.js";

defineFaultMatrix(["destroy"]);
