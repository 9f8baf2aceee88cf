import { Injectable, Logger } from '@nestjs/common';

/** A domain became verified, stopped being verified, or was deleted. */
export interface DomainChange {
  companyId: number;
  name: string;
}

/**
 * In-process announcements of committed changes to which company a verified domain belongs,
 * after the commit only. The relay decision caches domain owners and listens here to forget them.
 */
@Injectable()
export class DomainEvents {
  private readonly logger = new Logger(DomainEvents.name);
  private readonly listeners = new Set<(change: DomainChange) => void>();

  /** Calls `listener` for every change from now on; the returned function stops it. */
  onChange(listener: (change: DomainChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(change: DomainChange): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch (e: unknown) {
        this.logger.error({ err: e, change }, 'Domain change listener failed');
      }
    }
  }
}
