import { OwnedResource } from '../auth/guards/company-ownership.guard';
import { BILLING_NOT_FOUND } from './billing-queries';
import { Billing } from './entities/billing.entity';

/**
 * The route's `:uuid` is a billing of the caller's company: 400 malformed, 404 absent or another
 * company's. The handler reads it with @OwnedEntity().
 */
export const OwnedBilling = () => OwnedResource(Billing, BILLING_NOT_FOUND);
