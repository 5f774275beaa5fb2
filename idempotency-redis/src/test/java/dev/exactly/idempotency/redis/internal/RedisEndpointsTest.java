package dev.exactly.idempotency.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisURI;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RedisEndpointsTest {

    @Test
    void aSingleRedisUriIsStandalone() {
        RedisEndpoints endpoints = RedisEndpoints.parse(" redis://:secret@cache.internal:6380/2 ");
        assertThat(endpoints.cluster()).isFalse();
        RedisURI uri = endpoints.uris().getFirst();
        assertThat(uri.getHost()).isEqualTo("cache.internal");
        assertThat(uri.getPort()).isEqualTo(6380);
        assertThat(uri.getDatabase()).isEqualTo(2);
        assertThat(uri.getCredentialsProvider().resolveCredentials().block().getPassword())
                .containsExactly("secret".toCharArray());
    }

    @Test
    void aSentinelUriWithSeveralHostsStaysStandalone() {
        RedisEndpoints endpoints = RedisEndpoints.parse("redis-sentinel://s1:26379,s2:26379?sentinelMasterId=main");
        assertThat(endpoints.cluster()).isFalse();
        assertThat(endpoints.uris().getFirst().getSentinels()).hasSize(2);
        assertThat(endpoints.uris().getFirst().getSentinelMasterId()).isEqualTo("main");
    }

    @Test
    void theClusterSchemeListsSeedsSharingCredentialsAndOptions() {
        RedisEndpoints endpoints = RedisEndpoints.parse("redis-cluster://app:pw@n1:7000, n2:7001,n3:7002?timeout=3s");
        assertThat(endpoints.cluster()).isTrue();
        assertThat(endpoints.uris()).extracting(RedisURI::getHost).containsExactly("n1", "n2", "n3");
        assertThat(endpoints.uris()).extracting(RedisURI::getPort).containsExactly(7000, 7001, 7002);
        assertThat(endpoints.uris()).allSatisfy(uri -> {
            assertThat(uri.getCredentialsProvider().resolveCredentials().block().getUsername())
                    .isEqualTo("app");
            assertThat(uri.getTimeout()).isEqualTo(Duration.ofSeconds(3));
            assertThat(uri.isSsl()).isFalse();
        });
        assertThat(RedisEndpoints.parse("rediss-cluster://n1:7000")
                        .uris()
                        .getFirst()
                        .isSsl())
                .isTrue();
    }

    @Test
    void aCommaInARedisUriMeansClusterSeeds() {
        RedisEndpoints hosts = RedisEndpoints.parse("redis://n1:7000,n2:7001");
        assertThat(hosts.cluster()).isTrue();
        assertThat(hosts.uris()).extracting(RedisURI::getHost).containsExactly("n1", "n2");

        RedisEndpoints uris = RedisEndpoints.parse("redis://n1:7000,rediss://n2:7001");
        assertThat(uris.cluster()).isTrue();
        assertThat(uris.uris()).extracting(RedisURI::getPort).containsExactly(7000, 7001);
        assertThat(uris.uris().get(1).isSsl()).isTrue();
    }

    @Test
    void rejectsWhatIsNotARedisUri() {
        assertThatThrownBy(() -> RedisEndpoints.parse("localhost:6379")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RedisEndpoints.parse("redis-cluster://n1:7000,,n2:7001"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RedisEndpoints.parse("redis://n1:7000,redis://n2:7001,n3:7002"))
                .isInstanceOf(IllegalArgumentException.class);
        // an empty element at the end is as empty as one in the middle (String.split had dropped it unseen)
        assertThatThrownBy(() -> RedisEndpoints.parse("redis-cluster://n1:7000,n2:7001,"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty host");
        assertThatThrownBy(() -> RedisEndpoints.parse("redis://n1:7000,redis://n2:7001,"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty element");
    }
}
