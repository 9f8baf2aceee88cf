import { Injectable } from '@nestjs/common';
import { ChangeEvents } from '../../common/events/change-events';
import { ChangeNotices } from '../../database/change-notices';

/** Messages were stored: the submission workers (this process's and the others') look for work. */
@Injectable()
export class EmailWork extends ChangeEvents<{ emails: number }> {
  constructor(notices: ChangeNotices) {
    super(notices, 'email_work');
  }
}
