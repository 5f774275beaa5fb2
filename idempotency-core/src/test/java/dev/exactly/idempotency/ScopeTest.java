package dev.exactly.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ScopeTest {
    private static final IdempotencyKey KEY = new IdempotencyKey("order-42");

    @Test
    void everyPartOfTheScopeMatters() {
        ScopeKey base = new Scope("acme", "POST", "/v1/charges", KEY).toScopeKey();
        assertThat(new Scope("globex", "POST", "/v1/charges", KEY).toScopeKey()).isNotEqualTo(base);
        assertThat(new Scope("acme", "PUT", "/v1/charges", KEY).toScopeKey()).isNotEqualTo(base);
        assertThat(new Scope("acme", "POST", "/v1/refunds", KEY).toScopeKey()).isNotEqualTo(base);
        assertThat(new Scope("acme", "POST", "/v1/charges", new IdempotencyKey("order-43")).toScopeKey())
                .isNotEqualTo(base);
        assertThat(new Scope("acme", "post", "/v1/charges", KEY).toScopeKey()).isEqualTo(base);
    }

    @Test
    void fieldsAreLengthPrefixedSoBoundariesCannotShift() {
        ScopeKey a = new Scope("ab", "POST", "/r", new IdempotencyKey("c")).toScopeKey();
        ScopeKey b = new Scope("a", "POST", "/r", new IdempotencyKey("bc")).toScopeKey();
        assertThat(a).isNotEqualTo(b);
    }

    @Test
    void theStoreSeesAHashWithAClusterHashTagNeverTheRawKey() {
        ScopeKey key = new Scope("acme", "POST", "/v1/charges", KEY).toScopeKey();
        assertThat(key.hash()).matches("[0-9a-f]{64}").doesNotContain("order");
        assertThat(key.hashTag()).isEqualTo("{" + key.hash() + "}");
    }

    /** The digest is the stores' key: a change of its layout would orphan every record written before. */
    @Test
    void theScopeKeyIsSha256OverLengthPrefixedFields() {
        assertThat(new Scope("tenant-a", "post", "/v1/charges", new IdempotencyKey("key-1"))
                        .toScopeKey()
                        .hash())
                .isEqualTo("be16e0f03d3b060fd17bea40181d56023f79cd5d347bf0fce6525f4b9a3c589b");
    }
}
