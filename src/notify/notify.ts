// Notices (sdk.notify, `vigil notify`): a desktop notification where the OS has one
// (notify-send with a session bus, osascript on macOS), else a line on
// stderr; and, when vigil.yml names a server, an `ai.vigil.notify`
// observation (at most 5 s spent on it). Never throws: a notification is
// never worth failing a script.
import { spawnSync } from 'node:child_process';
import { findOnPath } from '../paths/which.ts';
import { loadWorkspaceConfig } from '../workspace/workspace-config.ts';
import { toolActor } from '../protocol/client-actor.ts';
import { ServerPublisher } from '../recipes/publish/server-publisher.ts';
import { NOTIFY_TYPE } from '../triggers/notify.ts';
import type { SdkContext } from '../workspace/context.ts';

/** sdk.notify.send: shown on the desktop (or stderr), then published when vigil.yml names a server. */
export async function sendNotice(ctx: SdkContext, title: string, message: string): Promise<void> {
  const shown = deliver(ctx, title, message);
  await publishNotice(ctx, String(title ?? '').slice(0, 200), String(message ?? '').slice(0, 2000), shown.delivered);
}

export function deliver(ctx: SdkContext, title: unknown, message: unknown): { delivered: 'desktop' | 'stderr' } {
      const t = String(title ?? '').slice(0, 200);
      const m = String(message ?? '').slice(0, 2000);
      try {
        if (process.platform === 'darwin' && findOnPath('osascript', ctx.env.PATH)) {
          const r = spawnSync('osascript', ['-e', `display notification ${JSON.stringify(m)} with title ${JSON.stringify(t)}`], { timeout: 5000 });
          if (r.status === 0) return { delivered: 'desktop' };
        }
        if ((ctx.env.DBUS_SESSION_BUS_ADDRESS || ctx.env.DISPLAY || ctx.env.WAYLAND_DISPLAY) && findOnPath('notify-send', ctx.env.PATH)) {
          const r = spawnSync('notify-send', ['--app-name=vigil', t, m], { timeout: 5000 });
          if (r.status === 0) return { delivered: 'desktop' };
        }
      } catch {
        // fall through to stderr
      }
      try {
        process.stderr.write(`[vigil notify] ${t}: ${m}\n`);
      } catch {
        // nothing left to try
      }
      return { delivered: 'stderr' };
}

export async function publishNotice(ctx: SdkContext, title: string, body: string, delivered: string): Promise<void> {
  try {
    const server = loadWorkspaceConfig(ctx.projectRoot).server;
    if (!server) return;
    const work = (async () => {
      const publisher = await ServerPublisher.connect(server, ctx.projectRoot, () => {}, toolActor('vigil-notify'));
      publisher?.publish(NOTIFY_TYPE, title || 'notify', { title, body, delivered });
      await publisher?.flush();
    })();
    await Promise.race([work, new Promise((r) => setTimeout(r, 5000).unref())]);
  } catch {
    // the desktop or stderr line was shown; the server copy is best effort
  }
}
