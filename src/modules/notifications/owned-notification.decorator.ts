import { byCaller, OwnedResource } from '../auth/guards/company-ownership.guard';
import { Notification } from './entities/notification.entity';

/**
 * The route's `:uuid` is a notification of the caller (the user, or the admin, itself): 400
 * malformed, 404 absent or someone else's. The handler reads it with @OwnedEntity().
 */
export const OwnedNotification = () =>
  OwnedResource(Notification, 'Notification not found', { ownedBy: byCaller });
