import { Logger } from '@nestjs/common';
import type { ChangeNotices } from '../../database/change-notices';

/**
 * Announcements of committed changes, for what caches derived state (the relay decision) to
 * forget it. Emitters call `emit` after the commit only; a listener that throws is logged and
 * does not stop the others. Given ChangeNotices and a channel, the changes also reach the other
 * processes on the same database (the API's replicas, the relay agent's policy server), whose
 * listeners hear them as their own: on PostgreSQL a few milliseconds after the commit; on SQLite
 * when that process calls `ChangeNotices.catchUp()` (the relay decision does before each answer)
 * and at least once a second.
 */
export class ChangeEvents<T> {
  private readonly logger = new Logger(this.constructor.name);
  private readonly listeners = new Set<(change: T) => void>();
  private listening = false;

  constructor(
    private readonly notices?: ChangeNotices,
    private readonly channel?: string,
  ) {}

  /** Calls `listener` for every change from now on, this process's and the others'; the returned function stops it. */
  onChange(listener: (change: T) => void): () => void {
    this.listeners.add(listener);
    if (!this.listening && this.notices && this.channel) {
      this.listening = true;
      this.notices.listen(this.channel, (change) => this.tell(change as T));
    }
    return () => this.listeners.delete(listener);
  }

  emit(change: T): void {
    this.tellHere(change);
    this.publishOnly(change);
  }

  /** This process's listeners only (a subclass that tells the others later, coalesced). */
  protected tellHere(change: T): void {
    this.tell(change);
  }

  /** The other processes only. */
  protected publishOnly(change: T): void {
    if (this.notices && this.channel) this.notices.publish(this.channel, change);
  }

  private tell(change: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch (e: unknown) {
        this.logger.error({ err: e, change }, 'Change listener failed');
      }
    }
  }
}
