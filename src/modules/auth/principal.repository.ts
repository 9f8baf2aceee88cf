import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { BatchedRead } from '../../database/batched-lookup';
import { PreparedRead } from '../../database/prepared-read';
import { MaybePromise, andThen } from '../../common/maybe-promise';
import { EntityRowReader } from '../../database/entity-row-reader';
import { TransactionService } from '../../database/transaction.service';
import { AdminRole } from '../admins/entities/admin-role.entity';
import { Admin } from '../admins/entities/admin.entity';
import { Company } from '../companies/entities/company.entity';
import { Contact } from '../users/entities/contact.entity';
import { User } from '../users/entities/user.entity';

/**
 * The access guard's lookups, run on every authenticated request: the caller with what the
 * routes need (a user with its contact and company, an admin with its role), each in one
 * indexed query whose SQL is built once. On PostgreSQL the lookups of concurrent requests
 * share one query; on SQLite they never read what an open transaction has not committed.
 */
@Injectable()
export class PrincipalRepository {
  private readonly user: EntityRowReader<User>;
  private readonly contact: EntityRowReader<Contact>;
  private readonly company: EntityRowReader<Company>;
  private readonly admin: EntityRowReader<Admin>;
  private readonly role: EntityRowReader<AdminRole>;
  private readonly users: PrincipalSource;
  private readonly admins: PrincipalSource;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: TransactionService,
  ) {
    this.user = new EntityRowReader(dataSource, User, 'u');
    this.contact = new EntityRowReader(dataSource, Contact, 'ct');
    this.company = new EntityRowReader(dataSource, Company, 'co');
    this.admin = new EntityRowReader(dataSource, Admin, 'a');
    this.role = new EntityRowReader(dataSource, AdminRole, 'r');
    // Each row starts with the uuid looked up, then the entities' columns in `read` order.
    this.users = this.source(
      'principal_user',
      `SELECT u.uuid, ${this.user.selectList()}, ${this.contact.selectList()}, ${this.company.selectList()} ` +
        `FROM users u INNER JOIN contacts ct ON ct.id = u.contact_id INNER JOIN companies co ON co.id = u.company_id ` +
        `WHERE u.uuid`,
    );
    this.admins = this.source(
      'principal_admin',
      `SELECT a.uuid, ${this.admin.selectList()}, ${this.role.selectList()} ` +
        `FROM admins a INNER JOIN admin_roles r ON r.id = a.role_id WHERE a.uuid`,
    );
  }

  /**
   * Synchronous on SQLite (better-sqlite3 answers in-process), a promise on PostgreSQL: the access
   * guard runs this on every request and is then itself synchronous on SQLite. `await` either.
   */
  findUser(uuid: string): MaybePromise<User | null> {
    return andThen(this.users.load(uuid), (row) => {
      if (!row) return null;
      const user = this.user.read(row, 1);
      user.contact = this.contact.read(row, 1 + this.user.width);
      user.company = this.company.read(row, 1 + this.user.width + this.contact.width);
      return user;
    });
  }

  /** Like findUser: synchronous on SQLite. */
  findAdmin(uuid: string): MaybePromise<Admin | null> {
    return andThen(this.admins.load(uuid), (row) => {
      if (!row) return null;
      const admin = this.admin.read(row, 1);
      admin.role = this.role.read(row, 1 + this.admin.width);
      return admin;
    });
  }

  /**
   * Straight to the driver with a statement prepared once (PreparedRead): TypeORM's query runner
   * adds ~50 µs a call on this path. On PostgreSQL concurrent lookups share one statement
   * (BatchedRead); SQLite answers in-process, one key at a time.
   */
  private source(name: string, sqlUpToKey: string): PrincipalSource {
    const many = new PreparedRead(this.dataSource, this.transactions, name, `${sqlUpToKey} = ANY(?)`);
    const one = new PreparedRead(this.dataSource, this.transactions, `${name}_one`, `${sqlUpToKey} = ?`);
    const read = new BatchedRead<Row>(this.transactions, {
      many: async (keys) => many.all([keys]),
      each: (keys) => one.all(keys),
    });
    return { load: (uuid) => andThen(read.load([uuid]), (rows) => rows.get(uuid)) };
  }
}

type Row = readonly unknown[];

interface PrincipalSource {
  load(uuid: string): MaybePromise<Row | undefined>;
}
