// RecipeError: the one failure a declared recipe can produce. It carries the facts a repository owner needs
// to fix the file (which file, where, which property) so the dispatch error is actionable, never a guess.

/** A 1-based position in the recipe file's text. */
export interface RecipeLocation {
  readonly line: number;
  readonly column: number;
}

export interface RecipeErrorFacts {
  /** Repository-relative path of the recipe file at fault. */
  readonly file: string;
  /** Where in the file, when the fault has a position (syntax errors and most property errors). */
  readonly location?: RecipeLocation;
  /** JSON path of the property at fault, e.g. `postCreateCommand.build` or `remoteEnv.PATH`. */
  readonly property?: string;
  /** What is wrong, as one sentence fragment without the file prefix. */
  readonly problem: string;
  /** What to do next. */
  readonly remedy: string;
}

export class RecipeError extends Error {
  override readonly name = "RecipeError";
  readonly file: string;
  readonly location: RecipeLocation | undefined;
  readonly property: string | undefined;

  constructor(facts: RecipeErrorFacts) {
    const where = facts.location ? `${facts.file}:${facts.location.line}:${facts.location.column}` : facts.file;
    super(`${where}: ${facts.problem}. ${facts.remedy}`);
    this.file = facts.file;
    this.location = facts.location;
    this.property = facts.property;
  }
}
