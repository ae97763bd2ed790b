// The door of the host room for the other rooms: everything the package publishes (public.ts), and what
// sibling rooms need besides.
export * from "./public.js";
export { listCheckpoints } from "./vm.js";
