// `vigil publish`: publishes one observation to a monitor on a running server.
// Unless --actor says otherwise, the actor is the command and who ran it
// (`agent:vigil-publish/<user>@<host>`); on a person's monitor it publishes
// on the owner's behalf, as a person typing it, which the owner's token permits.
import type { CAC } from 'cac';
import { onBehalfOfOwner, publishActor } from '../protocol/client-actor.ts';
import { exitCodeOf } from '../errors/exit-codes.ts';
import { baseHelp, resolveBase } from './base-flag.ts';
import { ServerError, serverClient, UnreachableError } from '../server-client/server-client.ts';
import { defineCommand } from './command.ts';
import { stringFlag, UsageError } from './options.ts';

interface PublishFlags {
  base?: unknown;
  token?: unknown;
  type?: unknown;
  subject?: unknown;
  tier?: unknown;
  origin?: unknown;
  verification?: unknown;
  actor?: unknown;
  data?: unknown;
  json?: boolean;
}

export function registerPublishCommand(cli: CAC): void {
  defineCommand(cli, 'publish <monitor>', 'Publish one observation to a monitor on a running server')
    .option('--base <url>', baseHelp, { type: [String] })
    .option('--token <token>', "The monitor's owner token (or VIGIL_TOKEN)", { type: [String] })
    .option('--type <type>', 'Observation type, e.g. ci.build.finished', { type: [String] })
    .option('--subject <subject>', 'What the observation is about', { type: [String] })
    .option('--tier <tier>', 'src, measured, derived, unverified or falsified', { type: [String] })
    .option('--origin <origin>', 'human, agent, webhook, probe or system', { type: [String] })
    .option('--verification <v>', 'human_verified, machine_verified, certified, reported or unverified', { type: [String] })
    .option('--actor <principal>', 'Who observed it, e.g. agent:builder (default: agent:vigil-publish/<user>@<host>)', { type: [String] })
    .option('--data <json>', 'Data as a JSON object', { type: [String] })
    .option('--json', 'Print the server reply as JSON')
    .example('vigil publish builds --token vgo_... --type ci.build.finished --subject job-42 --data \'{"ok":true}\'')
    .action(async (monitor: string, flags: PublishFlags) => {
      const token = stringFlag('--token', flags.token) ?? process.env.VIGIL_TOKEN;
      const type = stringFlag('--type', flags.type);
      if (!token) throw new UsageError('--token <token> is required (or set VIGIL_TOKEN).');
      if (!type) throw new UsageError('--type <type> is required.');
      const observation: Record<string, unknown> = { type };
      for (const field of ['subject', 'tier', 'origin', 'verification', 'actor'] as const) {
        const value = stringFlag(`--${field}`, flags[field]);
        if (value !== undefined) observation[field] = value;
      }
      const data = stringFlag('--data', flags.data);
      if (data !== undefined) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(data);
        } catch (error) {
          throw new UsageError(`--data must be a JSON object: ${(error as Error).message}`);
        }
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
          const kind = parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : `a ${typeof parsed}`;
          throw new UsageError(`--data must be a JSON object ({"key": value}); got ${kind}.`);
        }
        observation.data = parsed;
      }
      const client = serverClient(await resolveBase(flags.base));
      try {
        if (observation.actor === undefined) await nameTheClient(client, monitor, token, observation);
        const reply = await client.request('POST', `/monitors/${encodeURIComponent(monitor)}/observations`, { token, body: observation });
        process.stdout.write(flags.json ? `${JSON.stringify(reply)}\n` : `published ${monitor} seq ${reply.seq}\n`);
      } catch (error) {
        if (error instanceof ServerError && flags.json) process.stdout.write(`${JSON.stringify(error.body)}\n`);
        else process.stderr.write(`vigil publish: ${(error as Error).message}\n`);
        process.exit(exitCodeOf(error));
      }
    });
}

/**
 * The actor is this command run by this user; on a person's monitor the observation is published on the
 * owner's behalf (and, unless --origin says otherwise, with a person's origin, as before). The owner is
 * read with the same token; when it cannot be read the publish goes on and its own reply explains.
 */
async function nameTheClient(client: ReturnType<typeof serverClient>, monitor: string, token: string, observation: Record<string, unknown>): Promise<void> {
  observation.actor = publishActor();
  let owner: string | undefined;
  try {
    const served = await client.request<{ owner?: string; monitor?: { owner?: string } }>('GET', `/monitors/${encodeURIComponent(monitor)}`, { token });
    owner = served.monitor?.owner ?? served.owner;
  } catch (error) {
    if (error instanceof UnreachableError) throw error;
    return;
  }
  const behalf = onBehalfOfOwner(owner);
  Object.assign(observation, behalf);
  if (behalf.on_behalf_of && observation.origin === undefined) observation.origin = 'human';
}
