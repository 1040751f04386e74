// The console's entry: defines <agentd-console>, which index.html renders.
import './app.js';
