import { Injectable } from '@nestjs/common';
import { ChangeEvents } from '../../common/events/change-events';

/** A domain became verified, stopped being verified, or was deleted. */
export interface DomainChange {
  companyId: number;
  name: string;
}

/**
 * Committed changes to which company a verified domain belongs, announced after the commit
 * (DomainsService). The relay decision caches domain owners and listens here to forget them.
 */
@Injectable()
export class DomainEvents extends ChangeEvents<DomainChange> {}
