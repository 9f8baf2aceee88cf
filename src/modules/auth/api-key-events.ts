import { Injectable } from '@nestjs/common';
import { ChangeEvents } from '../../common/events/change-events';
import { ChangeNotices } from '../../database/change-notices';

/** A key revoked or changed (name, domains, networks): what cached it forgets it. */
export interface ApiKeyChange {
  apiKeyId: number;
}

/**
 * Committed changes to API keys, raised after the commit by ApiKeysService; every process on the
 * database hears them (ChangeNotices), so a revoked key is refused by every replica at once.
 */
@Injectable()
export class ApiKeyEvents extends ChangeEvents<ApiKeyChange> {
  constructor(notices: ChangeNotices) {
    super(notices, 'api_key_changes');
  }
}
