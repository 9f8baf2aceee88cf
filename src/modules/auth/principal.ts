import type { Admin } from '../admins/entities/admin.entity';
import type { ApiKey } from '../api-keys/entities/api-key.entity';
import type { Company } from '../companies/entities/company.entity';
import type { User } from '../users/entities/user.entity';

/** The caller, loaded from the database by the access guard (never taken from the token alone). */
export type Principal =
  | { kind: 'user'; user: User }
  | { kind: 'admin'; admin: Admin }
  /** A customer API key: it acts for its company, not for a user. */
  | { kind: 'api-key'; apiKey: ApiKey; company: Company };

/** The verified claims of an access token. */
export interface UserAccessClaims {
  userUuid: string;
  contactUuid: string;
  companyUuid: string;
  isAdmin: false;
}

export interface AdminAccessClaims {
  adminUuid: string;
  roleId: number;
  roleName: string;
}

export type AccessClaims = UserAccessClaims | AdminAccessClaims;

export interface RequestWithPrincipal {
  principal?: Principal;
  user?: AccessClaims;
}
