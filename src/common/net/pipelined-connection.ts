import { Socket } from 'node:net';

/**
 * One connection of a request/answer protocol (policy, SMTP AUTH) whose answers are written in
 * the order the requests came. Requests are taken from what was read only while fewer than
 * `maxPending` wait for their answers and the client reads what is written to it; otherwise the
 * socket is paused until an answer is written or 'drain' comes. A client that writes and never
 * reads thus holds at most one socket read and `maxPending` answers of the agent's memory, and
 * costs the other connections nothing.
 */
export abstract class PipelinedConnection {
  /** Requests taken and not yet answered. */
  private waiting = 0;
  private answered: Promise<void> = Promise.resolve();
  private waitingForDrain = false;
  private ending = false;

  constructor(
    protected readonly socket: Socket,
    private readonly maxPending: number,
    /** Told when reading stops until the client reads, with no answer left to write meanwhile. */
    private readonly stalled: () => void,
  ) {
    socket.on('data', (chunk: Buffer | string) => {
      this.received(chunk);
      this.read();
    });
    socket.on('drain', () => {
      this.waitingForDrain = false;
      this.read();
    });
    socket.on('error', () => socket.destroy());
  }

  /** Keeps a chunk read from the socket until takeNext takes the requests in it. */
  protected abstract received(chunk: Buffer | string): void;

  /**
   * Takes the next complete request from what was received: writes its answer or enqueues it
   * (or closes the socket on a protocol error). False when no complete request is there yet.
   */
  protected abstract takeNext(): boolean;

  /** How many requests wait for their answers. */
  protected get pending(): number {
    return this.waiting;
  }

  /** Closes the connection once every request taken is answered; nothing more is read. */
  end(): void {
    this.ending = true;
    if (this.waiting === 0) this.socket.end();
  }

  /** Takes requests while there is room for their answers; otherwise stops reading the socket. */
  private read(): void {
    while (
      !this.socket.destroyed &&
      !this.ending &&
      this.waiting < this.maxPending &&
      !this.waitingForDrain
    ) {
      if (!this.takeNext()) {
        if (!this.socket.destroyed) this.socket.resume();
        return;
      }
    }
    this.socket.pause();
    if (this.waitingForDrain && this.waiting === 0 && !this.socket.destroyed) this.stalled();
  }

  /**
   * Answers after every request enqueued before it. When `answer` throws, `failed` is told and
   * the connection is closed without an answer.
   */
  protected enqueue(answer: () => Promise<void>, failed: (e: unknown) => void): void {
    this.waiting += 1;
    this.answered = this.answered
      .then(async () => {
        if (!this.socket.destroyed) await answer();
      })
      .catch((e: unknown) => {
        failed(e);
        this.socket.destroy();
      })
      .finally(() => {
        this.waiting -= 1;
        if (this.ending && this.waiting === 0) this.socket.end();
        else this.read();
      });
  }

  /** Writes to the client; while it does not read, nothing more is read from it. */
  protected write(data: string | Buffer): void {
    if (this.socket.destroyed) return;
    if (!this.socket.write(data)) this.waitingForDrain = true;
  }
}
