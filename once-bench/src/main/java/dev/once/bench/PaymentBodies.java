package dev.once.bench;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Deterministic, realistic JSON request bodies of an exact size: compact payment objects as an API
 * client sends them (members in insertion order, not sorted), with nested objects, arrays, integer
 * and decimal amounts, strings with a little non-ASCII, booleans and nulls. Large sizes hold more
 * line items. A final {@code reference} string pads the body to the requested byte count.
 */
final class PaymentBodies {

  private static final String[] CITIES = {
    "Berlin", "Lyon", "Zürich", "København", "Porto", "Kraków"
  };
  private static final String[] SKUS = {
    "sku_coffee", "sku_tea", "sku_mug", "sku_filter", "sku_grinder"
  };

  private PaymentBodies() {}

  static byte[] ofSize(int size) {
    SplittableRandom random = new SplittableRandom(size);
    StringBuilder json = new StringBuilder(size + 64);
    if (size < 200) {
      json.append("{\"amount\":")
          .append(random.nextInt(100, 100_000))
          .append(",\"currency\":\"EUR\",\"capture\":true");
    } else {
      payment(json, random, size);
    }
    return pad(json, size);
  }

  private static void payment(StringBuilder json, SplittableRandom random, int size) {
    json.append("{\"amount\":")
        .append(random.nextInt(100, 100_000))
        .append(",\"currency\":\"EUR\",\"description\":\"Order #")
        .append(random.nextInt(1_000_000))
        .append("\",\"capture\":true,\"customer\":{\"id\":\"cus_")
        .append(Long.toHexString(random.nextLong()))
        .append(
            "\",\"email\":\"jane.doe@example.com\",\"name\":\"Jane Doe\",\"address\":{\"line1\":\"")
        .append(random.nextInt(1, 200))
        .append(" Main Street\",\"city\":\"")
        .append(CITIES[random.nextInt(CITIES.length)])
        .append("\",\"postal_code\":\"")
        .append(random.nextInt(10_000, 99_999))
        .append("\",\"country\":\"DE\"}}")
        .append(
            ",\"payment_method\":{\"type\":\"card\",\"card\":{\"brand\":\"visa\",\"last4\":\"4242\",\"exp_month\":")
        .append(random.nextInt(1, 13))
        .append(",\"exp_year\":2029}},\"items\":[");
    String tail =
        "],\"metadata\":{\"channel\":\"web\",\"campaign\":null,\"trace_id\":\""
            + Long.toHexString(random.nextLong())
            + "\",\"requested_at\":\"2024-05-01T10:00:00.000Z\"}";
    int room = size - tail.length() - "\"reference\":\"r\"}".length() - 8;
    for (int i = 0; ; i++) {
      StringBuilder item = item(new StringBuilder(i == 0 ? "" : ","), random);
      if (i > 0 && json.length() + item.length() > room) {
        break;
      }
      json.append(item);
    }
    json.append(tail);
  }

  private static StringBuilder item(StringBuilder json, SplittableRandom random) {
    return json.append("{\"sku\":\"")
        .append(SKUS[random.nextInt(SKUS.length)])
        .append("\",\"quantity\":")
        .append(random.nextInt(1, 10))
        .append(",\"unit_price\":")
        .append(String.format(Locale.ROOT, "%.2f", random.nextInt(100, 10_000) / 100.0))
        .append(",\"tax_rate\":0.19,\"discount\":")
        .append(random.nextInt(4) == 0 ? "0.05" : "0")
        .append(",\"gift\":")
        .append(random.nextBoolean())
        .append('}');
  }

  private static byte[] pad(StringBuilder json, int size) {
    String head = json.append(",\"reference\":\"").toString();
    int used = head.getBytes(StandardCharsets.UTF_8).length + 2;
    if (used > size) {
      throw new IllegalStateException(
          "cannot build a " + size + "-byte body; the fields alone take " + used);
    }
    String body = head + "r".repeat(size - used) + "\"}";
    return body.getBytes(StandardCharsets.UTF_8);
  }
}
