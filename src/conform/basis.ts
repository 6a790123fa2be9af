// What each conformance check rests on: `spec` when the base specification
// (the public monitor protocol Vigil implements: its objects, methods,
// bindings, delivery rules, principles and its own conformance list) requires
// what the check asserts, `vigil` when the check also asserts a rule of
// Vigil's own that is stricter than the specification or not in it (an exact
// limit, a field only Vigil serves, an error code the specification leaves
// open). `vigil conform --spec-only` runs the `spec` checks alone, so that
// another implementation of the base protocol is measured against the
// specification and not against Vigil. Every check of the suite has an entry
// here (suite.ts refuses to load otherwise).

export type Basis = 'spec' | 'vigil';

const spec = (why: string) => ({ basis: 'spec' as const, why });
const vigil = (why: string) => ({ basis: 'vigil' as const, why });

export const checkBasis: Readonly<Record<string, { readonly basis: Basis; readonly why: string }>> = {
  'MP-2-discover': vigil('the limits asserted (max_limit 1000, max_body_bytes, ...) are Vigil\'s; the specification asks for supportedVersions, capabilities, serverInfo and ttlMs'),
  'MP-1-error-shape': spec('the error object {code, error} and the HTTP mapping of methods'),
  'MP-1-unknown-route': vigil('the specification does not say what an unknown route or method answers'),
  'MP-1-malformed-json': vigil('the specification does not say what a body that is not a JSON object answers'),
  'MP-13-body-limit': vigil('TOO_LARGE and max_body_bytes are Vigil\'s'),
  'MP-13-origin-refused': spec('conformance C30'),
  'MP-13-host-refused': vigil('the Host check against DNS rebinding is Vigil\'s'),

  'MP-3-create-defaults': vigil('mon- plus 8 hex, the source as given and head 1 (a per-monitor seq) are Vigil\'s'),
  'MP-3-id-pattern': spec('the monitor id pattern [\\w.-]{2,64}'),
  'MP-3-duplicate-id': spec('monitors/create answers DUPLICATE'),
  'MP-3-vocabulary-together': vigil('reporting every vocabulary error of a request together is Vigil\'s'),
  'MP-3-source-label': spec('a source is {kind, ref}: any kind is a label'),
  'MP-3-served-fields': vigil('status, retention_floor and limits on the monitor, and a floor of 0 per monitor, are Vigil\'s'),
  'MP-3-create-configured': spec('create emits configured {action: create} (§5 of the objects)'),
  'MP-3-private-visibility': spec('P14 and C18: a private monitor is invisible without its owner token'),
  'MP-3-shared-visibility': spec('P14: shared means readable with the subscribe token'),
  'MP-3-public-visibility': spec('P14'),
  'MP-3-subscription-token-no-widen': vigil('the specification lets a private monitor be read by "owner or bearer"'),
  'MP-3-configure-reason': vigil('the specification takes a reason but does not refuse a configure without one'),
  'MP-3-configure-owner': spec('configure needs the owner token (C23)'),
  'MP-3-update-diff': spec('update returns the monitor with version + 1 and emits configured {action, diff, reason}'),
  'MP-3-update-vocabulary': spec('P11: a patch is vocabulary-checked'),
  'MP-3-pause-resume': vigil('reads the served status field and rejected_seq, which are Vigil\'s (the refusal itself is C14)'),
  'MP-3-retire-final': vigil('the status field, and refusing resume after retire, are Vigil\'s'),

  'MP-4-observation-shape': vigil('millisecond timestamps, the source monitor:<id> and the provenance keys on_behalf_of and attested go beyond C09/C10'),
  'MP-4-seq-contiguous': vigil('a seq per monitor from 1 without gaps is Vigil\'s; the specification asks for a sequence increasing within a source'),
  'MP-4-batch': vigil('batch publish is Vigil\'s'),
  'MP-4-batch-all-or-nothing': vigil('batch publish is Vigil\'s'),
  'MP-4-publish-owner': spec('publish needs the owner token (C23)'),
  'MP-4-type-required': vigil('the code INVALID for a missing type is Vigil\'s'),
  'MP-6-reserved-types': vigil('refusing producers the state and bookmark types is Vigil\'s'),
  'MP-4-supersedes': spec('C21'),

  'MP-5-defaults-agent': spec('P1: an agent\'s unstated tier is unverified'),
  'MP-5-defaults-by-kind': spec('P1 and C26: defaults follow the origin and stop below the top of each ladder'),
  'MP-5-vocabulary': spec('P11'),
  'MP-5-tier-src': spec('C04'),
  'MP-5-on-behalf-of': spec('C26'),
  'MP-5-human-ceiling': spec('P1'),
  'MP-5-human-origin-actor': spec('P1 and C26: the actor prefix is a ceiling'),
  'MP-5-first-match': vigil('the order in which refusals apply is Vigil\'s'),
  'MP-5-rejected-recorded': spec('P2 and C16'),
  'MP-5-rejected-other-writes': spec('P2: a refused configure is itself an observation'),
  'MP-5-rejected-raw-cut': vigil('cutting the raw body at 16 KiB is Vigil\'s'),

  'MP-7-fields': spec('C15 and the state object: covers_until is null until the source was observed'),
  'MP-7-counters': vigil('counting producer observations only, apart from bookkeeping, is Vigil\'s reading'),
  'MP-7-live': spec('the state object: live {value, reason} with paused and retired'),
  'MP-7-contradictions': vigil('resolution by data.resolves is Vigil\'s'),
  'MP-7-gaps': vigil('the order of the gaps is Vigil\'s'),
  'MP-7-stale-source': spec('the stale_source gap, timed as conformance §Runners says for millisecond clocks'),
  'MP-7-delivered': spec('the state counters and ages'),

  'MP-8-and-or': spec('the filter grammar'),
  'MP-8-provenance-keys': spec('the filter keys origins and sources'),
  'MP-8-type-prefix': spec('the filter grammar: a trailing * is a prefix'),
  'MP-8-text': spec('the filter grammar: text'),
  'MP-8-since-until': spec('the filter grammar: since and until are timestamps'),
  'MP-8-unknown-key': spec('C02'),
  'MP-8-unknown-type': spec('C03'),
  'MP-8-vocabulary-values': spec('P11: filter values are vocabulary-checked'),
  'MP-8-inline-narrow': vigil('the specification lets a widening inline filter be refused or intersected; the check wants it refused'),
  'MP-8-monitor-filter': spec('the monitor\'s filter is what it keeps from its source'),

  'MP-9-subscribe': spec('feeds/subscribe and the subscription object (reset_policy none by default)'),
  'MP-9-private-subscribe': spec('P14'),
  'MP-9-capability-grant': spec('P7 and C28'),
  'MP-3-subscribe-token': spec('P7 and P14: the subscribe token grants the full set'),
  'MP-9-resubscribe': vigil('refusing a re-subscribe without a token is Vigil\'s rule (the reference keeps it too)'),
  'MP-9-pull-token': spec('C23'),
  'MP-9-pull-shape': spec('the feeds/pull result'),
  'MP-9-pull-keeps-cursor': spec('C05 and redelivery'),
  'MP-9-ack': spec('C06 and C22'),
  'MP-9-ack-bounds': vigil('refusing an ack above head + 1 (rather than clamping it) is Vigil\'s'),
  'MP-0-integer-forms': spec('C27'),
  'MP-9-pull-params': vigil('refusing wait and limit out of range (rather than clamping them) is Vigil\'s'),
  'MP-9-limit-next-lag': spec('P5, C25 and next as the specification defines it'),
  'MP-9-from-head': spec('feeds/subscribe from'),
  'MP-9-replay-cursor': spec('a pull cursor is a read-only replay'),
  'MP-9-long-poll': spec('P4: a waiting pull'),
  'MP-9-seek': spec('feeds/seek with a reason, logged as subscribed'),
  'MP-9-renew': spec('feeds/renew'),
  'MP-9-retire': vigil('the retire reply\'s subscription object is Vigil\'s; the specification answers {ok}'),
  'MP-9-mute-retirement': spec('P6 and C19'),

  'MP-13-admin-token': spec('the admin endpoints always require an admin token'),
  'MP-10-compaction': vigil('compaction of one monitor and the monitor\'s own retention_floor are Vigil\'s'),

  'MP-11-frames': spec('the event stream binding: retry, then id/event/data per observation'),
  'MP-11-token': spec('C23'),
  'MP-11-last-event-id': spec('the event stream binding: Last-Event-ID resumes, only ack commits'),
  'MP-11-start-committed': spec('the event stream binding'),
  'MP-11-error': vigil('the error frame is Vigil\'s'),
  'MP-11-live': spec('the event stream binding'),

  'MP-12-needs-act': vigil('reads lease fields and the 300 s default that are Vigil\'s (the refusal itself is C11)'),
  'MP-12-unknown-subject': vigil('the code NOT_FOUND for a subject the monitor never published is Vigil\'s'),
  'MP-12-duration': vigil('the bounds 1-86400 are Vigil\'s'),
  'MP-12-idempotent-claim': spec('C20b'),
  'MP-12-lease-held': spec('C12'),
  'MP-12-lease-lost': spec('C13'),
  'MP-12-complete': vigil('reads the served lease (state, outcome) that is Vigil\'s; a repeated complete answering alike is the delivery rules\''),
  'MP-12-lease-counts': vigil('reads the served lease state, which is Vigil\'s'),
  'MP-12-dead-letter': spec('the attempt cap: a dead-lettered subject is refused DEAD_LETTERED'),
  'MP-12-claim-provenance': vigil('provenance on claims is Vigil\'s'),
  'MP-12-expiry': spec('C13 and the lease expiry rule'),

  'MP-14-result': spec('the JSON-RPC binding'),
  'MP-14-operations': spec('the JSON-RPC binding: params and the bearer'),
  'MP-14-error': spec('the JSON-RPC error object {code, message, data}'),
  'MP-14-error-numbers': vigil('the number of each code is not in the specification\'s text'),
  'MP-14-batch': spec('JSON-RPC 2.0 batches and notifications'),
  'MP-14-notification': spec('JSON-RPC 2.0: a notification gets no reply'),
  'MP-14-envelope-errors': spec('JSON-RPC 2.0: -32700, -32600, -32601'),

  'MP-17-expired-relist': spec('C17: CURSOR_EXPIRED with retention_floor and relist'),
  'MP-17-retired-token': vigil('the answer to a retired subscription\'s token is Vigil\'s'),
  'MP-17-resubscribe-201': vigil('201 on a re-subscribe is Vigil\'s reading'),
  'MP-17-own-token-narrows': vigil('what a subscription\'s own token may re-grant is Vigil\'s rule'),
  'MP-17-lease-replies': vigil('the lease replies\' fields beyond {ok} are Vigil\'s'),
  'MP-17-retire-reply': vigil('the retire reply\'s fields beyond {ok} are Vigil\'s'),
  'MP-17-whole-second-ages': spec('the state\'s ages are seconds'),
};
