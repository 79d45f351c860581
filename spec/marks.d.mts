/** The words that introduce an assumption wherever a reader meets it. */
export declare const ASSUMPTION_LABEL: "Assumption (not in the service description):";
/** The markdown an x-assumption becomes in its object's description. */
export declare function assumptionText(assumption: string): string;
/** Appends every `x-assumption` under `node` to its object's `description`, in place; returns `node`. */
export declare function appendAssumptions<T>(
  node: T,
  format?: (assumption: string, node: Record<string, unknown>) => string,
): T;
