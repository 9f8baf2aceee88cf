/**
 * How long work started in one turn of the event loop runs before the next piece of it waits for
 * the next turn. Requests that arrive together are all read in one turn (40 log batches sent at
 * once: 40 requests' body parsing and query building, ~250 ms here before the slice).
 */
export const LOOP_SLICE_MS = 20;

/**
 * A time slice of the event loop shared by the bulk requests before their handler
 * (waitForLoopSlice): 40 log batches that arrive together are read over several turns, not in
 * one block. The first piece of work in a turn opens the slice;
 * later pieces go on while it is younger than `sliceMs` and wait for the next turn once it is
 * spent (a setImmediate closes the slice, so a slice never outlives its turn). What waited goes on in the order it came, each first
 * in line opening the next slice.
 *
 * It bounds work between yield points, not the work of one piece: a single long statement or
 * parse still runs whole.
 */
export class LoopSlice {
  private startedAt: number | undefined;
  private readonly close = () => {
    this.startedAt = undefined;
  };

  constructor(public sliceMs = LOOP_SLICE_MS) {}

  /** True when the caller may go on in this turn (opening the slice if none is open). */
  enter(): boolean {
    const now = performance.now();
    if (this.startedAt === undefined) {
      this.startedAt = now;
      setImmediate(this.close);
      return true;
    }
    return now - this.startedAt < this.sliceMs;
  }

  /** Calls `go` at once while the slice allows, else in the first later turn that lets it in. */
  whenAllowed(go: () => void): void {
    if (this.enter()) go();
    else setImmediate(() => this.whenAllowed(go));
  }
}

/** The process's one slice, shared by every bulk request. */
export const eventLoopSlice = new LoopSlice();
