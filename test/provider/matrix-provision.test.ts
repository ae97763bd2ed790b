// The fault matrix's provision rows (matrix-spec.ts): every call provision makes, under every fault.
import { defineFaultMatrix } from "./matrix-spec.js";

defineFaultMatrix(["provision"]);
