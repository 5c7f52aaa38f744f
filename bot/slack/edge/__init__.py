"""What receives Slack's requests: HTTP and Socket Mode, the guard, payload shapes, clicks served at the edge, OAuth."""
