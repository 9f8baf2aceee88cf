import { Controller, Get, Module, Param } from '@nestjs/common';
import { ResponseMessage } from '../src/common/http/response-message.decorator';
import { UserAuth } from '../src/modules/auth/access.decorators';
import {
  CompanyScoped,
  OwnedEntity,
  OwnedResource,
} from '../src/modules/auth/guards/company-ownership.guard';
import { Contact } from '../src/modules/users/entities/contact.entity';
import {
  bearer,
  createActiveUser,
  createAdmin,
  expectFailure,
  RegisteredUser,
  LoggedIn,
} from './support/factories';
import { createTestApp, TestApp } from './support/test-app';

/** Routes mounted by this test only: the ownership guards that later areas put on their routes. */
@Controller('test/ownership')
class OwnershipProbeController {
  @Get('companies/:companyUuid')
  @UserAuth()
  @CompanyScoped()
  @ResponseMessage('Company reached')
  company(@Param('companyUuid') companyUuid: string) {
    return { companyUuid };
  }

  @Get('contacts/:uuid')
  @UserAuth()
  @OwnedResource(Contact, 'Contact not found')
  @ResponseMessage('Contact reached')
  contact(@Param('uuid') uuid: string, @OwnedEntity() contact: Contact) {
    return { uuid, loaded: { uuid: contact.uuid, companyId: contact.companyId } };
  }

  // The resource guard listed before CompanyScoped on purpose: the 403 must win whatever the order.
  @Get('companies/:companyUuid/contacts/:contactUuid')
  @UserAuth()
  @OwnedResource(Contact, 'Contact not found', { param: 'contactUuid' })
  @CompanyScoped()
  @ResponseMessage('Contact reached')
  nestedContact(@OwnedEntity('contactUuid') contact: Contact) {
    return { uuid: contact.uuid };
  }

  @Get('unguarded/:uuid')
  @UserAuth()
  unguarded(@OwnedEntity() contact: Contact) {
    return { uuid: contact.uuid };
  }
}

@Module({ controllers: [OwnershipProbeController] })
class OwnershipProbeModule {}

describe('Company ownership guards', () => {
  let t: TestApp;
  let alice: RegisteredUser & LoggedIn;
  let bob: RegisteredUser & LoggedIn;

  beforeAll(async () => {
    t = await createTestApp({ imports: [OwnershipProbeModule] });
    alice = await createActiveUser(t);
    bob = await createActiveUser(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const contactUuidOf = async (user: LoggedIn) => {
    const me = await t
      .http()
      .get('/api/v1/users/me')
      .set(...bearer(user.accessToken))
      .expect(200);
    return me.body.data.contact.uuid as string;
  };

  it('lets a user reach its own :companyUuid', async () => {
    const res = await t
      .http()
      .get(`/test/ownership/companies/${alice.companyUuid}`)
      .set(...bearer(alice.accessToken))
      .expect(200);
    expect(res.body).toMatchObject({ status: 'success', data: { companyUuid: alice.companyUuid } });
  });

  it("answers 403 for another company's :companyUuid", async () => {
    const res = await t
      .http()
      .get(`/test/ownership/companies/${bob.companyUuid}`)
      .set(...bearer(alice.accessToken))
      .expect(403);
    expectFailure(res.body, 403, 'This company is not yours');
  });

  it("answers 404 for another company's resource, exactly as for one that does not exist", async () => {
    const own = await t
      .http()
      .get(`/test/ownership/contacts/${await contactUuidOf(alice)}`)
      .set(...bearer(alice.accessToken))
      .expect(200);
    expect(own.body.data.uuid).toBeDefined();

    const foreign = await t
      .http()
      .get(`/test/ownership/contacts/${await contactUuidOf(bob)}`)
      .set(...bearer(alice.accessToken))
      .expect(404);
    const missing = await t
      .http()
      .get('/test/ownership/contacts/00000000-0000-4000-8000-000000000000')
      .set(...bearer(alice.accessToken))
      .expect(404);
    expectFailure(foreign.body, 404, 'Contact not found');
    expect(foreign.body).toEqual(missing.body);
  });

  it('hands the handler the row it loaded, so the service need not look it up again', async () => {
    const uuid = await contactUuidOf(alice);
    const res = await t
      .http()
      .get(`/test/ownership/contacts/${uuid}`)
      .set(...bearer(alice.accessToken))
      .expect(200);
    const row = await t.dataSource.getRepository(Contact).findOneByOrFail({ uuid });
    expect(res.body.data).toEqual({ uuid, loaded: { uuid, companyId: row.companyId } });
  });

  it('refuses a malformed uuid with 400 before any ownership check', async () => {
    for (const path of [
      '/test/ownership/contacts/not-a-uuid',
      `/test/ownership/companies/nope/contacts/${await contactUuidOf(alice)}`,
      `/test/ownership/companies/${alice.companyUuid}/contacts/123`,
    ]) {
      const res = await t
        .http()
        .get(path)
        .set(...bearer(alice.accessToken))
        .expect(400);
      expectFailure(res.body, 400, /uuid is expected/);
    }
  });

  it('under :companyUuid, 403 for another company wins over the 404, with the uuid in a named param', async () => {
    const own = await contactUuidOf(alice);
    const theirs = await contactUuidOf(bob);
    const at = (companyUuid: string, contactUuid: string) =>
      t
        .http()
        .get(`/test/ownership/companies/${companyUuid}/contacts/${contactUuid}`)
        .set(...bearer(alice.accessToken));
    expect((await at(alice.companyUuid, own).expect(200)).body.data).toEqual({ uuid: own });
    expectFailure((await at(alice.companyUuid, theirs).expect(404)).body, 404, 'Contact not found');
    expectFailure((await at(bob.companyUuid, theirs).expect(403)).body, 403, 'This company is not yours');
    expectFailure((await at(bob.companyUuid, own).expect(403)).body, 403, 'This company is not yours');
  });

  it('answers 500 (a programming error, never undefined) for @OwnedEntity on a route without the guard', async () => {
    const res = await t
      .http()
      .get(`/test/ownership/unguarded/${await contactUuidOf(alice)}`)
      .set(...bearer(alice.accessToken))
      .expect(500);
    expectFailure(res.body, 500);
  });

  it('documents the owned uuid parameter and the 400/404 of the resource guard', async () => {
    const doc = (await t.http().get('/api-docs-json').expect(200)).body as {
      paths: Record<
        string,
        Record<string, { parameters: Array<{ name: string; schema: object }>; responses: object }>
      >;
    };
    const op = doc.paths['/test/ownership/companies/{companyUuid}/contacts/{contactUuid}'].get;
    expect(op.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'contactUuid', schema: { type: 'string', format: 'uuid' } }),
        expect.objectContaining({ name: 'companyUuid', schema: { type: 'string', format: 'uuid' } }),
      ]),
    );
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['400', '403', '404']));
  });

  it('keeps admins out of user-scoped routes (403) and anonymous callers out (401)', async () => {
    const admin = await createAdmin(t, 'superAdmin');
    const res = await t
      .http()
      .get(`/test/ownership/companies/${alice.companyUuid}`)
      .set(...bearer(admin.accessToken))
      .expect(403);
    expectFailure(res.body, 403);
    await t.http().get(`/test/ownership/companies/${alice.companyUuid}`).expect(401);
  });

  it('reads the company from the database, not the token', async () => {
    // Move Alice to Bob's company behind the token's back: her old token now reaches Bob's company only.
    const { companyId } = await t.dataSource
      .getRepository(Contact)
      .findOneByOrFail({ uuid: await contactUuidOf(bob) });
    const repo = t.dataSource.getRepository('User');
    await repo.update({ email: alice.email }, { companyId });
    await t
      .http()
      .get(`/test/ownership/companies/${alice.companyUuid}`)
      .set(...bearer(alice.accessToken))
      .expect(403);
    await t
      .http()
      .get(`/test/ownership/companies/${bob.companyUuid}`)
      .set(...bearer(alice.accessToken))
      .expect(200);
  });
});
