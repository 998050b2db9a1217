package dev.once.spring.ledger;

import dev.once.spring.Idempotent;
import java.util.Map;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * An application whose handler writes to the database on a transactional route, beside a route that
 * is not transactional.
 */
@SpringBootApplication
public class FakeLedgerApplication {

  public static final String TABLE = "starter_tx_entries";

  @RestController
  static class EntriesController {
    private final JdbcTemplate jdbc;

    EntriesController(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    /**
     * Writes one row, then answers {@code status}, or throws if asked to; with {@code violate}, a
     * second insert breaks the primary key, so the SQL error aborts the transaction.
     */
    @PostMapping("/api/entries")
    @Idempotent(keyRequired = true, transactional = true)
    ResponseEntity<Map<String, Object>> add(
        @RequestBody Map<String, String> entry,
        @RequestParam(defaultValue = "201") int status,
        @RequestParam(defaultValue = "false") boolean fail,
        @RequestParam(defaultValue = "false") boolean violate) {
      jdbc.update("INSERT INTO " + TABLE + " (note) VALUES (?)", entry.get("note"));
      if (violate) {
        long id = jdbc.queryForObject("SELECT max(id) FROM " + TABLE, Long.class);
        jdbc.update("INSERT INTO " + TABLE + " (id, note) VALUES (?, ?)", id, entry.get("note"));
      }
      if (fail) {
        throw new IllegalStateException("the handler failed after writing");
      }
      return ResponseEntity.status(status).body(Map.of("note", entry.get("note")));
    }

    /** Writes nothing, on a route that is not transactional. */
    @PostMapping("/api/notes")
    @Idempotent(keyRequired = true)
    ResponseEntity<Map<String, Object>> note(@RequestBody Map<String, String> entry) {
      return ResponseEntity.status(201).body(Map.of("note", entry.get("note")));
    }
  }
}
