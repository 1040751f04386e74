import { createHmac } from 'node:crypto';
import { eventually, type RpcClient } from './helpers.js';

/** Waits until `channels.list` shows the platform `type` connected (its inbound side is up). */
export function channelConnected(rpc: RpcClient, type: string): Promise<true> {
  return eventually(async () => {
    const list = await rpc.call<{ channels: Array<{ type: string; status: string }> }>('channels.list');
    return list.channels.some((row) => row.type === type && row.status === 'connected') ? true : undefined;
  });
}

/**
 * A Slack Events API callback to the daemon at `url`, signed as Slack signs it:
 * `v0=HMAC(secret, "v0:<ts>:<body>")` with the current timestamp.
 */
export function signedSlackPost(url: string, payload: unknown, secret: string): Promise<Response> {
  const body = JSON.stringify(payload);
  const ts = String(Math.floor(Date.now() / 1000));
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`;
  return fetch(`${url}/channels/slack/events`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-slack-request-timestamp': ts,
      'x-slack-signature': signature,
    },
    body,
  });
}

/**
 * A Telegram text message from user `fromId` in chat `chatId` (a negative id is a group, as
 * Telegram numbers them), for `pushUpdate`/`postUpdate` of the fake Bot API.
 */
export function telegramMessage(messageId: number, chatId: number, fromId: number, text: string) {
  return {
    message_id: messageId,
    date: 1,
    chat: { id: chatId, type: chatId < 0 ? 'group' : 'private' },
    from: { id: fromId, is_bot: false, first_name: 'someone' },
    text,
  };
}
