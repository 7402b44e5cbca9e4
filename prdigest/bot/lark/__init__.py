"""The Lark/Feishu adapter: events, the SDK's client and long connection, cards out."""
