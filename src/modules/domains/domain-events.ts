import { Injectable } from '@nestjs/common';
import { ChangeEvents } from '../../common/events/change-events';
import { ChangeNotices } from '../../database/change-notices';

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
export class DomainEvents extends ChangeEvents<DomainChange> {
  constructor(notices: ChangeNotices) {
    super(notices, 'relay_domain_owner');
  }
}
