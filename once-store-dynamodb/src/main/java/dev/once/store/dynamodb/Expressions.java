package dev.once.store.dynamodb;

import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The name and value placeholders a request's expressions use. DynamoDB rejects a request that
 * defines a placeholder it does not use, so each request gets exactly the ones its expressions
 * mention, derived from the expressions themselves rather than kept in step by hand.
 */
final class Expressions {

  private static final Pattern NAME = Pattern.compile("#[A-Za-z]+");
  private static final Pattern VALUE = Pattern.compile(":[A-Za-z]+");
  // Several attribute names are DynamoDB reserved words, so every expression names them by
  // placeholder.
  private static final Map<String, String> ATTRIBUTES =
      Map.ofEntries(
          Map.entry("#scope", Items.SCOPE),
          Map.entry("#key", Items.KEY),
          Map.entry("#state", Items.STATE),
          Map.entry("#fp", Items.FINGERPRINT),
          Map.entry("#token", Items.TOKEN),
          Map.entry("#lease", Items.LEASE_UNTIL),
          Map.entry("#exp", Items.EXPIRES_AT),
          Map.entry("#rp", Items.RECOVERY_POINT),
          Map.entry("#result", Items.RESULT),
          Map.entry("#ttl", Items.TTL),
          Map.entry("#created", Items.CREATED_AT));

  private Expressions() {}

  static Map<String, String> names(String... expressions) {
    Map<String, String> names = new HashMap<>();
    for (String expression : expressions) {
      Matcher m = NAME.matcher(expression);
      while (m.find()) {
        String attribute = ATTRIBUTES.get(m.group());
        if (attribute == null) {
          throw new IllegalStateException(
              "unknown attribute placeholder " + m.group() + " in " + expression);
        }
        names.put(m.group(), attribute);
      }
    }
    return names;
  }

  /**
   * The values the expressions use; {@code null} if none, since DynamoDB also rejects an empty map.
   */
  static @Nullable Map<String, AttributeValue> values(
      Map<String, AttributeValue> available, String... expressions) {
    Map<String, AttributeValue> values = new HashMap<>();
    for (String expression : expressions) {
      Matcher m = VALUE.matcher(expression);
      while (m.find()) {
        AttributeValue value = available.get(m.group());
        if (value == null) {
          throw new IllegalStateException(
              "no value for placeholder " + m.group() + " in " + expression);
        }
        values.put(m.group(), value);
      }
    }
    return values.isEmpty() ? null : values;
  }
}
