package dev.once.http;

/** The RFC 9110 reason phrases of error statuses, for {@code about:blank} problem titles. */
final class ReasonPhrases {

  private ReasonPhrases() {}

  static String of(int status) {
    return switch (status) {
      case 400 -> "Bad Request";
      case 401 -> "Unauthorized";
      case 402 -> "Payment Required";
      case 403 -> "Forbidden";
      case 404 -> "Not Found";
      case 405 -> "Method Not Allowed";
      case 406 -> "Not Acceptable";
      case 407 -> "Proxy Authentication Required";
      case 408 -> "Request Timeout";
      case 409 -> "Conflict";
      case 410 -> "Gone";
      case 411 -> "Length Required";
      case 412 -> "Precondition Failed";
      case 413 -> "Content Too Large";
      case 414 -> "URI Too Long";
      case 415 -> "Unsupported Media Type";
      case 416 -> "Range Not Satisfiable";
      case 417 -> "Expectation Failed";
      case 421 -> "Misdirected Request";
      case 422 -> "Unprocessable Content";
      case 423 -> "Locked";
      case 424 -> "Failed Dependency";
      case 425 -> "Too Early";
      case 426 -> "Upgrade Required";
      case 428 -> "Precondition Required";
      case 429 -> "Too Many Requests";
      case 431 -> "Request Header Fields Too Large";
      case 451 -> "Unavailable For Legal Reasons";
      case 500 -> "Internal Server Error";
      case 501 -> "Not Implemented";
      case 502 -> "Bad Gateway";
      case 503 -> "Service Unavailable";
      case 504 -> "Gateway Timeout";
      case 505 -> "HTTP Version Not Supported";
      default -> status < 500 ? "Client Error" : "Server Error";
    };
  }
}
