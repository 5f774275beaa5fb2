/**
 * The Redis store (standalone, Sentinel or Cluster, through Lettuce). Exports {@code dev.exactly.idempotency.redis};
 * its {@code internal} package (scripts, codecs, connection plumbing) is not exported.
 */
// Lettuce is an automatic module (its jar names itself lettuce.core), and its types (RedisClient, RedisURI) are in
// the store's API: an application reading this module reads Lettuce's as well
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module dev.exactly.idempotency.redis {
    requires transitive dev.exactly.idempotency;
    requires transitive lettuce.core;
    requires io.netty.common;
    requires io.netty.transport;
    requires io.netty.handler;
    // Lettuce's client resources load Netty's DNS resolver; Lettuce, an automatic module, requires nothing, so
    // without this the resolver's module is not in the graph and the first store fails to start
    requires io.netty.resolver.dns;
    requires static transitive org.jspecify; // its annotations are in the API: a reader sees them too

    exports dev.exactly.idempotency.redis;
}
