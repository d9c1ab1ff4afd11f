// onSubscribe of the "campaigns" channel namespace (AWS AppSync Events,
// APPSYNC_JS): a channel is /campaigns/<owner sub>/<campaign id>, and a
// user may subscribe only below their own sub (their campaigns, or
// /campaigns/<sub>/* for all of them). Any other channel, a wildcard in
// the owner segment included, is refused.
// https://docs.aws.amazon.com/appsync/latest/eventapi/channel-namespace-handlers.html
// https://docs.aws.amazon.com/appsync/latest/eventapi/context-reference.html
export function onSubscribe(ctx) {
  const segments = ctx.info.channel.segments;
  const sub = ctx.identity ? ctx.identity.sub : undefined;
  if (!sub || segments.length < 3 || segments[1] !== sub) {
    util.unauthorized();
  }
}
