import { OwnedResource } from '../auth/guards/company-ownership.guard';
import { DOMAIN_NOT_FOUND } from './domains.service';
import { Domain } from './entities/domain.entity';

/**
 * The route's `:uuid` is a domain of the caller's company: 400 malformed, 404 absent or another
 * company's. The handler reads it with @OwnedEntity().
 */
export const OwnedDomain = () => OwnedResource(Domain, DOMAIN_NOT_FOUND);
