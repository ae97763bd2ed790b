// The fault matrix's inspect rows (matrix-spec.ts): every call inspect makes, under every fault.
import { defineFaultMatrix } from "./matrix-spec.js";

defineFaultMatrix(["inspect"]);
