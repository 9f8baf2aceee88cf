import { Injectable } from '@nestjs/common';
import { ChangeEvents } from '../../common/events/change-events';
import { ChangeNotices } from '../../database/change-notices';

/** How long the other processes' notice of new messages may wait, to tell them of many at once. */
const NOTICE_EVERY_MS = 20;

/** Messages were stored: the submission workers (this process's and the others') look for work. */
@Injectable()
export class EmailWork extends ChangeEvents<{ emails: number }> {
  private pending = 0;
  private timer?: NodeJS.Timeout;

  constructor(notices: ChangeNotices) {
    super(notices, 'email_work');
  }

  /**
   * Tells this process's worker at once and the other processes within NOTICE_EVERY_MS, in one
   * notice for every message stored meanwhile (a notice is a statement: one per message would
   * cost as much as storing it).
   */
  stored(emails: number): void {
    this.tellHere({ emails });
    this.pending += emails;
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      const emails = this.pending;
      this.pending = 0;
      this.publishOnly({ emails });
    }, NOTICE_EVERY_MS);
    this.timer.unref();
  }
}
