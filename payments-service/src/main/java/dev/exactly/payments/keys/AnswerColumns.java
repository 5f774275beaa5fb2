package dev.exactly.payments.keys;

import dev.exactly.idempotency.StoredResponse;
import dev.exactly.payments.db.Jdbc;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A recorded answer kept on a business row (charge, refund), in four columns: {@code response_status},
 * {@code response_type}, {@code response_location} and {@code response_body}. The row outlives its
 * idempotency record, and replays the answer from these columns exactly as it was recorded.
 */
public final class AnswerColumns {
    private static final String CONTENT_TYPE = "content-type";
    private static final String LOCATION = "location";

    private AnswerColumns() {}

    /** Binds status, media type, location and body to four consecutive parameters from {@code first}. */
    public static void bind(PreparedStatement s, int first, StoredResponse answer) throws SQLException {
        s.setInt(first, answer.status());
        s.setString(first + 1, header(answer, CONTENT_TYPE));
        s.setString(first + 2, header(answer, LOCATION));
        s.setBytes(first + 3, answer.body());
    }

    /** The answer recorded on the current row, or {@code null} when it has none yet. */
    public static @Nullable StoredResponse read(ResultSet rs) throws SQLException {
        Integer status = Jdbc.nullableInt(rs, "response_status");
        if (status == null) {
            return null;
        }
        Map<String, List<String>> headers = new LinkedHashMap<>();
        headers.put(CONTENT_TYPE, List.of(rs.getString("response_type")));
        String location = rs.getString("response_location");
        if (location != null) {
            headers.put(LOCATION, List.of(location));
        }
        return new StoredResponse(status, headers, rs.getBytes("response_body"));
    }

    private static @Nullable String header(StoredResponse answer, String name) {
        List<String> values = answer.headers().get(name);
        return values == null || values.isEmpty() ? null : values.getFirst();
    }
}
