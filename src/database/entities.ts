import { AdminRole } from '../modules/admins/entities/admin-role.entity';
import { Admin } from '../modules/admins/entities/admin.entity';
import { RevokedRefreshToken } from '../modules/auth/entities/revoked-refresh-token.entity';
import { Company } from '../modules/companies/entities/company.entity';
import { Contact } from '../modules/users/entities/contact.entity';
import { User } from '../modules/users/entities/user.entity';

/** Every entity, for the data source (the app and the TypeORM CLI share it). */
export const ENTITIES = [AdminRole, Admin, Company, Contact, User, RevokedRefreshToken];
