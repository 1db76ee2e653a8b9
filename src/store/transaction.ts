// A write transaction in progress, as services see it: opaque. A service only hands it from one
// repository's method to another's, so that writes of two aggregates (a job's outputs and its state)
// commit together; each implementation knows what it really is.
declare const transaction: unique symbol;

export interface Transaction {
  readonly [transaction]: true;
}
