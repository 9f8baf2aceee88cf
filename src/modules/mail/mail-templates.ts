export interface MailContent {
  subject: string;
  text: string;
  html: string;
}

const escapeHtml = (s: string): string =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

function layout(title: string, paragraphs: string[], link: { url: string; label: string }): MailContent {
  const text = [
    ...paragraphs,
    '',
    `${link.label}: ${link.url}`,
    '',
    'If you did not expect this e-mail, you can ignore it.',
  ].join('\n');
  const html = `<!doctype html><html><body style="font-family:sans-serif;max-width:560px">
<h2>${escapeHtml(title)}</h2>
${paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n')}
<p><a href="${escapeHtml(link.url)}">${escapeHtml(link.label)}</a></p>
<p style="color:#666;font-size:12px">If you did not expect this e-mail, you can ignore it.</p>
</body></html>`;
  return { subject: title, text, html };
}

export const verificationMail = (fullName: string, url: string): MailContent =>
  layout(
    'Verify your e-mail address',
    [
      `Hello ${fullName},`,
      'Please confirm your e-mail address to activate your account. The link is valid for 24 hours.',
    ],
    { url, label: 'Verify e-mail' },
  );

export const passwordResetMail = (fullName: string, url: string): MailContent =>
  layout(
    'Reset your password',
    [
      `Hello ${fullName},`,
      'Someone asked to reset the password of your account. The link is valid for 24 hours and works once.',
    ],
    { url, label: 'Reset password' },
  );

export const invitationMail = (fullName: string, companyName: string, url: string): MailContent =>
  layout(
    `You are invited to ${companyName}`,
    [
      `Hello ${fullName},`,
      `You have been invited to join ${companyName}. Set your password to accept the invitation (valid for 24 hours).`,
    ],
    { url, label: 'Accept invitation' },
  );

/** A notification worth an e-mail (billing paid, quota warnings, broadcasts, …), with an optional link. */
export function notificationMail(
  title: string,
  body: string,
  link?: { url: string; label: string },
): MailContent {
  if (link) return layout(title, body.split('\n').filter(Boolean), link);
  const paragraphs = body.split('\n').filter(Boolean);
  return {
    subject: title,
    text: paragraphs.join('\n'),
    html: `<!doctype html><html><body style="font-family:sans-serif;max-width:560px">
<h2>${escapeHtml(title)}</h2>
${paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n')}
</body></html>`,
  };
}
