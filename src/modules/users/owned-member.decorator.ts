import { OwnedResource } from '../auth/guards/company-ownership.guard';
import { User } from './entities/user.entity';

/**
 * The route's `:userUuid` is a user of the caller's company: 400 malformed, 404 absent or of
 * another company. The handler reads it with @OwnedEntity('userUuid').
 */
export const OwnedMember = () => OwnedResource(User, 'User not found', { param: 'userUuid' });
