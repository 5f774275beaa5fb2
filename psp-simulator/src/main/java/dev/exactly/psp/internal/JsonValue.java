package dev.exactly.psp.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A JSON value as the simulator understands it: objects, arrays, strings, integers that fit a
 * {@code long}, booleans and null. Fractions and exponents are deliberately unsupported (money is an
 * integer number of minor units).
 */
public sealed interface JsonValue {

    /** A JSON object; members keep their order of appearance. */
    record Obj(Map<String, JsonValue> members) implements JsonValue {
        public Obj {
            members = Collections.unmodifiableMap(new LinkedHashMap<>(members));
        }

        /** The member, or {@code null} when absent (a JSON {@code null} member is {@link Null#INSTANCE}). */
        public @Nullable JsonValue get(String name) {
            return members.get(name);
        }
    }

    /** A JSON array. */
    record Arr(List<JsonValue> elements) implements JsonValue {
        public Arr {
            elements = List.copyOf(elements);
        }
    }

    /** A JSON string. */
    record Str(String value) implements JsonValue {
        public Str {
            Objects.requireNonNull(value, "value");
        }
    }

    /** A JSON integer. */
    record Num(long value) implements JsonValue {}

    /** A JSON boolean. */
    record Bool(boolean value) implements JsonValue {}

    /** The JSON literal {@code null}. */
    enum Null implements JsonValue {
        INSTANCE
    }

    /** Starts an object builder. */
    static ObjBuilder object() {
        return new ObjBuilder();
    }

    /** Builds an {@link Obj} member by member, in order. */
    final class ObjBuilder {
        private final Map<String, JsonValue> members = new LinkedHashMap<>();

        private ObjBuilder() {}

        public ObjBuilder put(String name, JsonValue value) {
            if (members.putIfAbsent(name, value) != null) {
                throw new IllegalArgumentException("duplicate member " + name);
            }
            return this;
        }

        public ObjBuilder put(String name, @Nullable String value) {
            return put(name, value == null ? Null.INSTANCE : new Str(value));
        }

        public ObjBuilder put(String name, long value) {
            return put(name, new Num(value));
        }

        public ObjBuilder put(String name, boolean value) {
            return put(name, new Bool(value));
        }

        public ObjBuilder put(String name, Map<String, String> stringMap) {
            ObjBuilder nested = new ObjBuilder();
            stringMap.forEach(nested::put);
            return put(name, nested.build());
        }

        public ObjBuilder put(String name, List<? extends JsonValue> elements) {
            return put(name, new Arr(new ArrayList<>(elements)));
        }

        public Obj build() {
            return new Obj(members);
        }
    }
}
